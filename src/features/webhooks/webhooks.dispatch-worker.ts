import { parentPort, workerData } from 'node:worker_threads';
import { openStorage } from '../../storage/database.js';
import type { DispatchWorkerData, FromDispatchThread } from './webhooks.dispatch-thread.js';
import { dispatchLoop } from './webhooks.dispatch-loop.js';
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

const storage = openStorage(data.storage, { onPoolError: (error) => log.warn({ err: error }, 'an idle database connection of the dispatch thread failed') });
const stop = new AbortController();
port.on('message', (message: unknown) => {
  if (message === 'stop') stop.abort();
});

try {
  await dispatchLoop(createDispatcher(storage, data.webhooks, log), stop.signal, log);
} finally {
  await storage.close();
  port.close();
}
