import { closeSync, openSync, readSync } from 'node:fs';
import { endianness } from 'node:os';

/**
 * Byte offsets in the `-shm` file (sqlite.org/walformat.html, 2.1 and 2.2): `mxFrame`, the
 * last committed frame, in the first copy of the wal-index header; `nBackfill`, the frames
 * already copied into the database file, first word of the checkpoint information after
 * the header's two copies.
 */
const MX_FRAME = 16;
const N_BACKFILL = 96;

/** The write-ahead log as it is now: pages in it, and how many of them are copied into the database file. */
export interface WalState {
  pages: number;
  copied: number;
}

/**
 * Reads the write-ahead log's state from the wal-index of the database at `path`: 32-bit
 * words in the machine's byte order. Every process that opens the database shares that
 * index, so its layout is fixed across SQLite versions. The checkpointer's report says the
 * same only after its next pass, and writes that judged room by an older report outran it;
 * the `-wal` file's size would not do, since the log starts over at its beginning and the
 * file never shrinks. Undefined when the `-shm` file cannot be read.
 */
export function walIndexReader(path: string): { read: () => WalState | undefined; close: () => void } {
  let fd: number | undefined;
  const bytes = Buffer.alloc(N_BACKFILL + 4);
  const word = endianness() === 'LE' ? (at: number) => bytes.readUInt32LE(at) : (at: number) => bytes.readUInt32BE(at);
  return {
    read() {
      try {
        fd ??= openSync(`${path}-shm`, 'r');
        return readSync(fd, bytes, 0, bytes.length, 0) === bytes.length ? { pages: word(MX_FRAME), copied: word(N_BACKFILL) } : undefined;
      } catch {
        return undefined;
      }
    },
    close() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}
