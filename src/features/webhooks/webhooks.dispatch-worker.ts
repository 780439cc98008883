import { parentPort, workerData } from 'node:worker_threads';
import { type Storage, openStorage } from '../../storage/database.js';
import type { DispatchWorkerData, FromDispatchThread } from './webhooks.dispatch-thread.js';
import { Alarm, dispatchLoop } from './webhooks.dispatch-loop.js';
import { createDispatcher } from './webhooks.dispatcher.js';

/*
 * The dispatch thread's entry (webhooks.dispatch-thread.ts): sends deliveries through a
 * database connection of its own (SQLite: the same file, WAL; PostgreSQL: a small pool of
 * its own) until the server tells it to stop.
 */

const port = parentPort;
if (port === null) throw new Error('webhooks.dispatch-worker runs as a worker thread');
const data = workerData as DispatchWorkerData;

/** Errors cross to the server's log as plain data: an error object may hold what cannot be cloned. */
function plain(obj: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(obj)) {
    out[key] = value instanceof Error ? { type: value.name, message: value.message, stack: value.stack, code: (value as { code?: unknown }).code } : value;
  }
  return out;
}
const log = { warn: (obj: object, msg: string) => port.postMessage({ kind: 'warn', obj: plain(obj), msg } satisfies FromDispatchThread) };

/** The shortest pause after each write transaction of this thread on SQLite. */
const MIN_GAP_MS = 5;

/**
 * On SQLite the server's connection polls for the write lock (busy_timeout 0, sqlite.ts):
 * this thread's write transactions back to back would leave it no gap, and a user's write
 * failed with 503 after 5 s. So each is followed by a pause as long as it held the lock:
 * the lock is free at least half the time, whatever this thread has queued.
 */
function takingTurns(storage: Storage): Storage {
  if (storage.engine !== 'sqlite') return storage;
  let chain: Promise<unknown> = Promise.resolve();
  let freeAt = 0;
  const transaction: Storage['transaction'] = (fn) => {
    const turn = chain.then(async () => {
      const wait = freeAt - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const started = Date.now();
      try {
        return await storage.transaction(fn);
      } finally {
        freeAt = Date.now() + Math.max(MIN_GAP_MS, Date.now() - started);
      }
    });
    chain = turn.catch(() => undefined);
    return turn;
  };
  return { ...storage, transaction };
}

const storage = openStorage(data.storage, { onPoolError: (error) => log.warn({ err: error }, 'an idle database connection of the dispatch thread failed') });
const stop = new AbortController();
// 'wake': the server's fan-out or clock queued deliveries (RunningDispatch.wake), so a resting dispatcher looks now.
const alarm = new Alarm();
port.on('message', (message: unknown) => {
  if (message === 'stop') stop.abort();
  if (message === 'wake') alarm.wake();
});

try {
  await dispatchLoop(createDispatcher(takingTurns(storage), data.webhooks, log), stop.signal, log, alarm);
} finally {
  await storage.close();
  port.close();
}
