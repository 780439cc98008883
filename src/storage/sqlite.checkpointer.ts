import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * The service connection's own automatic checkpoint, in pages: only a backstop for when the
 * checkpointer below has stopped or cannot keep up (SQLite's default is 1,000 pages).
 */
export const BACKSTOP_CHECKPOINT_PAGES = 16_384;

/** How long the checkpointer rests after finding nothing to copy. */
const IDLE_MS = 20;

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
let stopped = false;
let timer;
let seen = '';
/** Whether the log changed since the last look: then more may have come in meanwhile. */
function checkpoint() {
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    if (result === undefined) return false;
    const now = result.log + ':' + result.checkpointed;
    const moved = now !== seen && result.log > 0;
    seen = now;
    return moved;
  } catch {
    return false;
  }
}
function loop() {
  if (stopped) return;
  // Look again at once after copying something; rest once a look finds nothing new (also when
  // a reader's snapshot keeps part of the log from being copied).
  timer = checkpoint() ? setImmediate(loop) : setTimeout(loop, workerData.idleMs);
}
loop();
parentPort.once('message', () => {
  stopped = true;
  clearTimeout(timer);
  clearImmediate(timer);
  checkpoint();
  db.close();
  parentPort.close();
});
`;

export interface Checkpointer {
  /** Stops the worker after a last checkpoint; resolves once it has exited. */
  stop(): Promise<void>;
}

/** Starts checkpointing the database file at `path` off the event loop. */
export function startCheckpointer(path: string): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(SOURCE, { eval: true, workerData: { path, driver, idleMs: IDLE_MS } });
  // Never what keeps a process alive; should it fail, the backstop checkpoints instead.
  worker.unref();
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    worker.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  worker.on('error', () => undefined);
  return {
    async stop() {
      // Held by the worker until it has exited: unreferenced, a process with nothing else left
      // to do would end while waiting for it, before whatever comes after the close.
      if (!exited) {
        worker.ref();
        worker.postMessage('stop');
      }
      await exit;
    },
  };
}
