import type { FastifyBaseLogger } from 'fastify';

/**
 * The hub's loop: runs `steps` in turn every `pollMs` while `active()`, one tick at a time
 * (a stream opening while one runs must not start a second loop beside it: it asks for
 * the next tick at once, after the running one), and calls `idle()` when it stops.
 */
export function createTicker(q: { steps: readonly (() => Promise<void>)[]; pollMs: number; active: () => boolean; idle: () => void; log: FastifyBaseLogger }) {
  let timer: NodeJS.Timeout | undefined;
  let ticking = false;
  let soon = false;
  let stopped = false;

  function schedule(delayMs: number) {
    if (ticking) soon ||= delayMs === 0;
    else if (timer === undefined && !stopped) timer = setTimeout(() => void tick(), delayMs);
  }

  async function tick(): Promise<void> {
    timer = undefined;
    ticking = true;
    for (const step of q.steps) {
      if (!q.active() || stopped) break;
      try {
        await step();
      } catch (error) {
        // The database may be away a moment; the streams stay open and the next tick tries again.
        q.log.warn({ err: error }, 'event streams: a poll failed; retrying');
      }
    }
    ticking = false;
    if (q.active() && !stopped) schedule(soon ? 0 : q.pollMs);
    else q.idle();
    soon = false;
  }

  return {
    /** A tick at once (or right after the running one). */
    now: () => schedule(0),
    stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}
