import type { Worker } from 'node:worker_threads';
import { type Storage, type StorageSettings, isPostgresUrl } from '../../storage/database.js';
import { spawnThread } from '../../toolkit/threads.js';
import { Alarm, dispatchLoop } from './webhooks.dispatch-loop.js';
import { type WarnLog, createDispatcher } from './webhooks.dispatcher.js';
import type { WebhookSettings } from './webhooks.service.js';

/** What the dispatch thread starts with: structured-cloneable settings only. */
export interface DispatchWorkerData {
  storage: StorageSettings;
  webhooks: WebhookSettings;
}
/** What the dispatch thread tells the server. */
export type FromDispatchThread = { kind: 'warn'; obj: Record<string, unknown>; msg: string };

/**
 * PostgreSQL connections of the dispatch thread, besides the instance's DB_POOL_SIZE
 * (docs/deployment.md): sending is bound by CPU, not connections (docs/performance.md).
 */
export const DISPATCH_THREAD_CONNECTIONS = 2;
/** After a crash, the thread starts again this much later. */
const RESTART_MS = 1_000;
/** The longest the server waits for the thread to record what it sent before ending it. */
const CLOSE_WAIT_MS = 15_000;

export interface RunningDispatch {
  /** Deliveries were queued and committed: a resting dispatcher looks now (DISPATCH_REST_MS). */
  wake(): void;
  /** Cuts attempts in flight, records outcomes and releases leases; resolves once the dispatcher has stopped. */
  close(): Promise<void>;
}

/** The dispatch thread, started again after a crash until closed. */
function startThread(data: DispatchWorkerData, log: WarnLog & { error(obj: object, msg: string): void }): RunningDispatch {
  let worker: Worker | undefined;
  let closing = false;
  let restart: NodeJS.Timeout | undefined;
  const start = () => {
    const current = spawnThread(import.meta.url, 'webhooks.dispatch-worker', { workerData: data });
    worker = current;
    current.on('message', (m: FromDispatchThread) => log.warn(m.obj, m.msg));
    current.on('error', (error) => log.error({ err: error }, 'webhook dispatch thread failed'));
    current.on('exit', (code) => {
      worker = undefined;
      if (closing) return;
      log.error({ code }, 'webhook dispatch thread ended; starting it again');
      restart = setTimeout(start, RESTART_MS).unref();
    });
  };
  start();
  return {
    wake() {
      worker?.postMessage('wake');
    },
    async close() {
      closing = true;
      clearTimeout(restart);
      const current = worker;
      if (current === undefined) return;
      const ended = new Promise((resolve) => current.once('exit', resolve));
      current.postMessage('stop');
      const deadline = setTimeout(() => void current.terminate(), CLOSE_WAIT_MS);
      await ended;
      clearTimeout(deadline);
    },
  };
}

/**
 * Starts sending webhook deliveries. Signing, HTTP and their bookkeeping run on a thread of
 * their own with its own database connection, so the event loop serves requests only (contract
 * section 13, fan-out; docs/architecture.md). An in-memory SQLite database cannot be opened
 * twice: there, and when the settings ask (`inline`), the dispatcher runs on the event loop.
 */
export function startDispatch(storage: Storage, webhooks: WebhookSettings, log: WarnLog & { error(obj: object, msg: string): void }): RunningDispatch {
  const { databaseUrl, poolSize, connectTimeoutMs, statementTimeoutMs, roomWaitMs } = storage.settings;
  if (webhooks.inline !== true && (isPostgresUrl(databaseUrl) || !databaseUrl.endsWith(':memory:'))) {
    const pool = Math.min(poolSize ?? DISPATCH_THREAD_CONNECTIONS, DISPATCH_THREAD_CONNECTIONS);
    // Copied field by field: what the storage was opened with may carry more than can be cloned.
    return startThread({ storage: { databaseUrl, poolSize: pool, connectTimeoutMs, statementTimeoutMs, roomWaitMs }, webhooks: { ...webhooks } }, log);
  }
  const stop = new AbortController();
  const alarm = new Alarm();
  const loop = dispatchLoop(createDispatcher(storage, webhooks, log), stop.signal, log, alarm);
  return {
    wake: () => alarm.wake(),
    async close() {
      stop.abort();
      await loop;
    },
  };
}
