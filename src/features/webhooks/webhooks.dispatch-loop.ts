import type { Dispatcher, WarnLog } from './webhooks.dispatcher.js';

/** How often an idle dispatcher looks for due deliveries. */
export const DISPATCH_IDLE_MS = 200;

/**
 * Runs the dispatcher until `stop` aborts: a step again at once while it finds work (after
 * pending I/O), else after DISPATCH_IDLE_MS; an error is logged and the step runs again
 * later. Then the dispatcher closes (attempts cut, outcomes recorded).
 */
export async function dispatchLoop(dispatcher: Dispatcher, stop: AbortSignal, log: WarnLog): Promise<void> {
  while (!stop.aborted) {
    let handled = 0;
    try {
      handled = await dispatcher.step();
    } catch (error) {
      log.warn({ err: error, job: 'webhook-dispatcher' }, 'background job failed; it runs again later');
    }
    if (handled > 0) {
      await new Promise((resolve) => setImmediate(resolve));
      continue;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, DISPATCH_IDLE_MS);
      stop.addEventListener('abort', done, { once: true });
      function done() {
        clearTimeout(timer);
        stop.removeEventListener('abort', done);
        resolve();
      }
    });
  }
  await dispatcher.close();
}
