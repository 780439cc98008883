import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { walIndexReader } from './sqlite.wal-index.js';

/**
 * The service connection's own automatic checkpoint, in pages: only a backstop for when the
 * checkpointer below has stopped, and for writes outside `Storage.transaction` (SQLite's
 * default is 1,000 pages). It runs on the event loop: ~100 ms per commit past it under a
 * stream of series writes (docs/performance.md, "Write stalls").
 */
export const BACKSTOP_CHECKPOINT_PAGES = 32_768;

/**
 * Pages of write-ahead log past which a write transaction first waits, off the event loop,
 * for the checkpointer to copy the whole log. Under a stream of writes the log is otherwise
 * never wholly copied when the next write begins, so it never starts over and grows until
 * the backstop checkpoints on the event loop. The log then holds at most this and one write
 * (roomyTransaction), half the backstop and a daily series; each wait costs about one
 * checkpoint, so a smaller room means more of them: at 8,192 pages daily-series writes ran
 * at half their rate (docs/performance.md, "A room for twice as many writes").
 */
export const LOG_ROOM_PAGES = 16_384;

/** The longest a write transaction waits for room; then it goes ahead and the backstop bounds the log. */
const ROOM_WAIT_MS = 2_000;

/** How long the checkpointer rests after finding nothing to copy. */
const IDLE_MS = 20;

/**
 * How long the log must stay short and wholly copied before the checkpointer rests longer, and
 * for how long: under a stream of writes it keeps looking every IDLE_MS; once idle, a new commit
 * waits up to a second to be copied, and a write that finds the log long wakes it (room()).
 */
export interface Quiet {
  afterMs: number;
  restMs: number;
}
const QUIET: Quiet = { afterMs: 1_000, restMs: 1_000 };

/*
 * A checkpoint copies the write-ahead log into the database file and syncs it. SQLite runs
 * one automatically at the commit that takes the log past 1,000 pages, on the committing
 * connection: for the service, on the event loop. Writing a daily series touches ~1,300
 * pages (its occurrences in three instant-ordered indexes), so every such commit also
 * checkpointed, and that was half of its cost (docs/performance.md). This worker thread
 * checkpoints instead, through a connection of its own, in PASSIVE mode: it never waits
 * for the service's reads or writes and never makes them wait. CommonJS source, so that
 * it runs the same from src/ under the test runner and from dist/.
 */
const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('busy_timeout = 0');
db.pragma('synchronous = NORMAL');
const shared = new Int32Array(workerData.shared);
let stopped = false;
let timer;
let seen = '';
// Since when every pass found a short log wholly copied and nothing new: nothing to copy until
// the next commit, and no write waits on a pass (room() waits only on a long log).
let quietSince;
/** Whether the log changed since the last look: then more may have come in meanwhile. */
function checkpoint() {
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    // -1: the checkpoint did not run (another connection was checkpointing the file). It says
    // nothing of the log; reporting it as a short log let waiting writes go.
    if (result === undefined || result.log < 0) return false;
    // What the service's write transactions wait on (room()): the log's length, how much of it
    // is copied, and that one more checkpoint ran.
    Atomics.store(shared, 0, result.log);
    Atomics.store(shared, 1, result.checkpointed);
    Atomics.add(shared, 2, 1);
    Atomics.notify(shared, 2);
    const now = result.log + ':' + result.checkpointed;
    const moved = now !== seen && result.log > 0;
    seen = now;
    const quiet = !moved && result.checkpointed >= result.log && result.log <= workerData.roomPages;
    quietSince = quiet ? (quietSince ?? Date.now()) : undefined;
    return moved;
  } catch {
    return false;
  }
}
function loop() {
  if (stopped) return;
  // Look again at once after copying something; rest once a look finds nothing new (also when
  // a reader's snapshot keeps part of the log from being copied), longer while all is quiet.
  if (checkpoint()) timer = setImmediate(loop);
  else timer = setTimeout(loop, quietSince !== undefined && Date.now() - quietSince >= workerData.quiet.afterMs ? workerData.quiet.restMs : workerData.idleMs);
}
loop();
parentPort.on('message', (message) => {
  clearTimeout(timer);
  clearImmediate(timer);
  if (message === 'wake') return loop();
  stopped = true;
  checkpoint();
  db.close();
  parentPort.close();
});
`;

export interface Checkpointer {
  /**
   * Resolves when a write transaction may begin: at once while the log is within
   * LOG_ROOM_PAGES; past it, once a fresh checkpoint has copied all of it (the write then
   * starts the log over), once the worker is gone, or after the room wait (ROOM_WAIT_MS).
   * True when it found room; false when it stopped waiting without (the write then goes
   * ahead regardless).
   */
  room(): Promise<boolean>;
  /**
   * Whether the log, as it is at this moment, is past LOG_ROOM_PAGES and not wholly copied:
   * a write beginning now would lengthen it further rather than start it over. Asked once
   * the write lock is held, since writes that found room together then commit one by one.
   */
  crowded(): boolean;
  /** The worker's last report: the log and its copied part as its latest checkpoint found them, and how many have run. */
  report(): LogReport;
  /** Stops the worker after a last checkpoint; resolves once it has exited. */
  stop(): Promise<void>;
}

/** The checkpointer's last report: frames in the log, frames copied, and how many checkpoints it has run. */
export interface LogReport {
  log: number;
  checkpointed: number;
  passes: number;
}

/**
 * Whether a write may begin, given the report when it began to wait (`from`) and the latest
 * (`now`): the log is short, or a checkpoint that started after the wait began copied all of
 * it. Only then does the write start the log over: SQLite starts it over for a write whose
 * snapshot began with the log wholly copied, and a copy finished before the last commit is
 * not that.
 */
export function mayWrite(from: LogReport, now: LogReport): boolean {
  return from.log <= LOG_ROOM_PAGES || now.log <= LOG_ROOM_PAGES || (now.passes > from.passes + 1 && now.checkpointed >= now.log);
}

/** Resolves once the checkpoint count may have moved past `passes`, or after `timeoutMs`. */
export type NextPass = (passes: number, timeoutMs: number) => Promise<unknown>;

/**
 * Waiting on the worker's checkpoint count (slot 2 of `shared`): woken by the worker's
 * Atomics.notify as each checkpoint ends, with no polling in between.
 */
export function onCheckpoint(shared: Int32Array): NextPass {
  return (passes, timeoutMs) => {
    const wait = Atomics.waitAsync(shared, 2, passes, timeoutMs);
    if (!wait.async) return Promise.resolve(wait.value);
    // Atomics.waitAsync holds the process open no more than the unreferenced worker does: a
    // process with nothing else to do (a CLI command, the bench's seeder) ended, exit status
    // 0, in the middle of a write waiting for room. A timer for the same bound holds it, and
    // ends the wait itself: the wait's own timeout, firing a moment later, holds nothing.
    let hold: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timed-out'>((resolve) => (hold = setTimeout(() => resolve('timed-out'), timeoutMs)));
    return Promise.race([wait.value, timedOut]).finally(() => clearTimeout(hold));
  };
}

/** Waits until `mayWrite` (true) or `gone()` (false), looking again after each `nextPass`, for at most `waitMs` (false). */
export async function waitForRoom(report: () => LogReport, gone: () => boolean, nextPass: NextPass, waitMs = ROOM_WAIT_MS): Promise<boolean> {
  const from = report();
  const deadline = Date.now() + waitMs;
  for (let now = from; !mayWrite(from, now); now = report()) {
    const left = deadline - Date.now();
    if (gone() || left <= 0) return false;
    await nextPass(now.passes, left);
  }
  return true;
}

/** Starts checkpointing the database file at `path` off the event loop; writes wait for room up to `roomWaitMs`, and the worker rests as `quiet` says. */
export function startCheckpointer(path: string, roomWaitMs = ROOM_WAIT_MS, quiet = QUIET): Checkpointer {
  // The log's length as it is now, not as of the worker's last pass (sqlite.wal-index.ts).
  const walIndex = walIndexReader(path);
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  // [frames in the log, frames copied, checkpoints run], written by the worker after each checkpoint.
  const shared = new Int32Array(new SharedArrayBuffer(12));
  const worker = new Worker(SOURCE, { eval: true, workerData: { path, driver, idleMs: IDLE_MS, quiet, roomPages: LOG_ROOM_PAGES, shared: shared.buffer } });
  // Never what keeps a process alive; should it fail, the backstop checkpoints instead.
  worker.unref();
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    worker.once('exit', () => {
      exited = true;
      // Wakes the writes waiting on the count: they see the worker gone and go ahead.
      Atomics.notify(shared, 2);
      resolve();
    }),
  );
  worker.on('error', () => undefined);
  const report = (): LogReport => ({ log: Atomics.load(shared, 0), checkpointed: Atomics.load(shared, 1), passes: Atomics.load(shared, 2) });
  const nextPass = onCheckpoint(shared);
  return {
    report,
    room() {
      let woken = false;
      return waitForRoom(
        () => ({ ...report(), log: walIndex.read()?.pages ?? Atomics.load(shared, 0) }),
        () => exited,
        (passes, timeoutMs) => {
          // A write waits only on a long log, which the worker, resting from a quiet spell, may not
          // have seen yet. Once per wait: waking it after every pass would spin while a reader's
          // snapshot keeps the log from being copied.
          if (!woken && !exited) worker.postMessage('wake');
          woken = true;
          return nextPass(passes, timeoutMs);
        },
        roomWaitMs,
      );
    },
    crowded() {
      const wal = walIndex.read();
      return wal !== undefined && wal.pages > LOG_ROOM_PAGES && wal.copied < wal.pages;
    },
    async stop() {
      // Held by the worker until it has exited: unreferenced, a process with nothing else left
      // to do would end while waiting for it, before whatever comes after the close.
      if (!exited) {
        worker.ref();
        worker.postMessage('stop');
      }
      await exit;
      walIndex.close();
    },
  };
}
