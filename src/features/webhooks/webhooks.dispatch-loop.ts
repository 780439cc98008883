import type { Dispatcher, WarnLog } from './webhooks.dispatcher.js';

/** A sleep that a wake ends early; a wake while awake ends the next sleep at once, so that none is lost (deliveries queued during a claim). */
export class Alarm {
  #pending = false;
  #ring: (() => void) | undefined;

  wake(): void {
    if (this.#ring === undefined) this.#pending = true;
    else this.#ring();
  }

  sleep(ms: number, stop: AbortSignal): Promise<void> {
    if (this.#pending || stop.aborted) {
      this.#pending = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        stop.removeEventListener('abort', done);
        this.#ring = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      stop.addEventListener('abort', done, { once: true });
      this.#ring = done;
    });
  }
}

/**
 * Runs the dispatcher until `stop` aborts: a step again at once while it finds work (after
 * pending I/O), else after the pause the dispatcher asks for (Dispatcher.pause) or a wake;
 * an error is logged and the step runs again later. Then the dispatcher closes (attempts
 * cut, outcomes recorded).
 */
export async function dispatchLoop(dispatcher: Dispatcher, stop: AbortSignal, log: WarnLog, alarm = new Alarm()): Promise<void> {
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
    await alarm.sleep(dispatcher.pause(Date.now()), stop);
  }
  await dispatcher.close();
}
