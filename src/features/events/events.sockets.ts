import type { ServerResponse } from 'node:http';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import type { StreamSlot } from './events.slots.js';

/** A client this far behind in reading is dropped; it resumes with Last-Event-ID. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/** Socket writes between two yields to the event loop. */
const WRITE_BATCH = 100;

/** One open event stream of the hub (events.hub.ts), in the hub's set of open streams. */
export interface Stream {
  user: AuthenticatedUser;
  tokenHash: string;
  slot: StreamSlot;
  res: ServerResponse;
  /** The log position everything up to which was sent (or was nothing for this user). */
  cursor: number;
  lastWriteAt: number;
  closed: boolean;
}

/** Ends a stream and forgets it: its slot comes back at once. */
export function endStream(stream: Stream, open: Set<Stream>): void {
  if (stream.closed) return;
  stream.closed = true;
  open.delete(stream);
  stream.slot.release();
  // Ended and then gone: a socket left half-open by its client would keep a closing
  // server waiting for it.
  stream.res.end();
  stream.res.socket?.destroySoon();
}

/** Writes to one stream; a client too far behind in reading is ended. */
export function writeTo(stream: Stream, text: string, open: Set<Stream>): void {
  if (stream.closed) return;
  stream.res.write(text);
  stream.lastWriteAt = Date.now();
  if (stream.res.writableLength > MAX_BUFFERED_BYTES) endStream(stream, open);
}

/** Writes to many sockets, yielding to the event loop every WRITE_BATCH: a write costs tens of microseconds. */
export async function writeAll(list: readonly Stream[], text: string, open: Set<Stream>): Promise<void> {
  for (let i = 0; i < list.length; i++) {
    writeTo(list[i] as Stream, text, open);
    if ((i + 1) % WRITE_BATCH === 0) await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * Keep-alives run on a timer of their own, not at the end of a hub tick: a tick waits for
 * the database, and a database away for long (or a tick slowed by a busy machine) must not
 * let proxies close quiet streams meanwhile.
 */
export function createHeartbeat(deps: {
  open: Set<Stream>;
  settings: { pollMs: number; heartbeatMs: number };
  closing: () => boolean;
  log: { warn(obj: object, msg: string): void };
}) {
  const { open, settings } = deps;
  let beat: NodeJS.Timeout | undefined;
  let beating = false;
  const stop = () => {
    clearInterval(beat);
    beat = undefined;
  };
  async function heartbeat() {
    if (open.size === 0 || deps.closing()) return stop();
    if (beating) return;
    beating = true;
    // Checked every pollMs: a stream whose comment would be late by the next check gets it now,
    // so that no gap exceeds heartbeatMs (contract section 8: "at least every 15 s").
    const due = Date.now() - Math.max(0, settings.heartbeatMs - settings.pollMs);
    try {
      await writeAll([...open].filter((stream) => stream.lastWriteAt <= due), ': keep-alive\n\n', open);
    } catch (error) {
      deps.log.warn({ err: error }, 'event streams: a heartbeat failed');
    } finally {
      beating = false;
    }
  }
  return {
    start() {
      if (beat === undefined && !deps.closing()) beat = setInterval(() => void heartbeat(), settings.pollMs);
    },
    stop,
  };
}
