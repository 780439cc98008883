import type { Storage } from '../../storage/database.js';
import { type AttemptOutcome, type Claims, type Release, TURN_DELIVERIES, type Turn, createClaims } from './webhooks.claims.js';
import { DELIVERY_TIMEOUT_MS, nextAttemptDelay } from './webhooks.events.js';
import { type Sender, createSender } from './webhooks.sender.js';
import type { WebhookSettings } from './webhooks.service.js';

/**
 * Webhooks an instance sends to at once, each ATTEMPTS_PER_WEBHOOK attempts at a time. A
 * slot is a webhook's sockets waiting, never an API request; one user holds at most WEBHOOKS_IN_FLIGHT_PER_USER of them
 * (webhooks.claims.ts), so a receiver that never answers costs its own webhook's turn only.
 */
export const DISPATCH_CONCURRENCY = 64;
/** Attempts in flight at once to one webhook: a receiver is never flooded, and a silent one holds two sockets. */
export const ATTEMPTS_PER_WEBHOOK = 2;
/** A webhook's lease: a turn starts an attempt only while a whole one fits in it; after a crash, what was not recorded is sent again once it ends. */
export const LEASE_MS = 2.5 * DELIVERY_TIMEOUT_MS;
/**
 * Claims are at least this far apart: a claim reads every webhook with due work, so its
 * cost is bounded per second, not per delivery, however many small turns end.
 */
const CLAIM_INTERVAL_MS = 100;
/** How often a dispatcher with turns in flight looks for more due deliveries. */
export const DISPATCH_IDLE_MS = 200;
/**
 * How long a dispatcher with nothing in flight rests, unless woken: its instance wakes it once
 * its fan-out or clock has queued deliveries (server.jobs.ts), and it wakes itself for the
 * retries it scheduled. What is left for the rest to find is another instance's work (its own
 * dispatcher was woken for it) or a lease run out: found within this long. Looking every
 * 200 ms kept an idle server busy.
 */
export const DISPATCH_REST_MS = 2_000;
/** Outcomes are recorded this long after the first of a batch ended: one transaction for many attempts. */
const SETTLE_DELAY_MS = 50;

type Attempt = Turn['deliveries'][number];
/** Where the dispatcher's warnings go: the app's logger, or the dispatch thread's messages to it. */
export type WarnLog = { warn(obj: object, msg: string): void };

export type Dispatcher = ReturnType<typeof createDispatcher>;

function outcomeOf(d: Attempt, status: number | null, retryScale: number): AttemptOutcome {
  const at = new Date();
  if (status !== null && status >= 200 && status < 300) return { id: d.id, kind: 'delivered', status, at: at.toISOString() };
  const delay = nextAttemptDelay(d.attempts + 1, retryScale);
  if (delay === undefined) return { id: d.id, kind: 'failed', status, at: at.toISOString() };
  return { id: d.id, kind: 'retry', status, at: at.toISOString(), next: new Date(at.getTime() + delay).toISOString() };
}

type Settler = ReturnType<typeof createSettler>;

/** Gathers outcomes and ended leases and writes them in batches: one transaction for many attempts, one writer at a time. */
function createSettler(claims: Claims, stop: AbortSignal, log: WarnLog) {
  let outcomes: AttemptOutcome[] = [];
  let released: Release[] = [];
  let settling: Promise<void> | undefined;

  function settle(): Promise<void> {
    settling ??= (async () => {
      try {
        // Gathers what ends meanwhile into the same transaction.
        if (!stop.aborted) await new Promise((resolve) => setTimeout(resolve, SETTLE_DELAY_MS));
        while (outcomes.length > 0 || released.length > 0) {
          const batch = outcomes;
          const ended = released;
          outcomes = [];
          released = [];
          try {
            await claims.settle(batch, ended);
          } catch (error) {
            // The leases run out and the deliveries are attempted again: at least once.
            log.warn({ err: error, deliveries: batch.length }, 'could not record webhook attempts');
          }
        }
      } finally {
        settling = undefined;
      }
    })();
    return settling;
  }

  return {
    settle,
    outcome(o: AttemptOutcome): void {
      outcomes.push(o);
      void settle();
    },
    release(r: Release): void {
      released.push(r);
      void settle();
    },
  };
}

/** What a turn's attempts go through. */
interface TurnContext {
  claims: Claims;
  sender: Sender;
  settler: Settler;
  stop: AbortSignal;
  retryScale: number;
  /** When the retries this dispatcher scheduled fall due (ms): its rest ends at the soonest. */
  readonly retries: number[];
}

/** A batch of a turn: ATTEMPTS_PER_WEBHOOK at a time while the lease has room for a whole attempt; false when cut short. */
async function sendBatch(turn: Turn, { claims, sender, settler, stop, retryScale, retries }: TurnContext): Promise<boolean> {
  const leaseEnd = Date.parse(turn.leaseUntil);
  let next = 0;
  let over = false;
  const worker = async () => {
    while (!over) {
      // Taken before waiting: the other worker must not take the same one.
      const d = turn.deliveries[next++];
      if (d === undefined) break;
      const live = stop.aborted || Date.now() + DELIVERY_TIMEOUT_MS > leaseEnd ? undefined : await claims.alive(turn.webhookId, new Date().toISOString());
      if (live === undefined) {
        over = true;
        break;
      }
      const status = await sender.post({ url: live.url, secrets: live.secrets, eventId: d.event_id, body: d.body });
      // Cut by shutdown: not attempted after all, sent again later.
      if (stop.aborted && status === null) continue;
      const outcome = outcomeOf(d, status, retryScale);
      if (outcome.kind === 'retry') retries.push(Date.parse(outcome.next));
      settler.outcome(outcome);
    }
  };
  await Promise.all(Array.from({ length: ATTEMPTS_PER_WEBHOOK }, worker));
  return !over;
}

/**
 * Sends due deliveries: leases webhooks fairly (webhooks.claims.ts: across users, then
 * webhooks; shared with other instances), sends each webhook's deliveries one after
 * another signed per Standard Webhooks 1.0, at most DISPATCH_CONCURRENCY webhooks at once,
 * and records outcomes in batches. A 2xx within 10 s is delivered; anything else (a 3xx
 * included: redirects are not followed) is retried on the schedule of RETRY_DELAYS_MS,
 * then failed. Sockets connect only to addresses checked at connect time
 * (webhooks.sender.ts). Right before each attempt the webhook is read again: a deleted or
 * inactive one is sent nothing more, queued deliveries included. The server runs it on a
 * thread of its own (webhooks.dispatch-thread.ts).
 */
export function createDispatcher(storage: Storage, settings: WebhookSettings, log: WarnLog) {
  const claims = createClaims(storage);
  const sender = createSender(settings, DISPATCH_CONCURRENCY * ATTEMPTS_PER_WEBHOOK);
  const stop = new AbortController();
  const settler = createSettler(claims, stop.signal, log);
  const context: TurnContext = { claims, sender, settler, stop: stop.signal, retryScale: settings.retryScale, retries: [] };
  const active = new Set<Promise<void>>();
  let lastClaim = 0;

  /** One webhook's turn: batches while it has a full batch due and keeps its lease, then the lease is released. */
  async function run(turn: Turn): Promise<void> {
    for (let more = true; more; ) {
      const full = turn.deliveries.length === TURN_DELIVERIES;
      more = (await sendBatch(turn, context)) && full && !stop.signal.aborted;
      if (!more) break;
      // Recorded first: the next batch must not take what was just sent.
      await settler.settle();
      const now = Date.now();
      more = await claims.renew(turn, { now: new Date(now).toISOString(), leaseUntil: new Date(now + LEASE_MS).toISOString() });
      if (turn.deliveries.length === 0) more = false;
    }
    settler.release({ webhookId: turn.webhookId, leaseUntil: turn.leaseUntil, at: new Date().toISOString() });
  }

  return {
    /**
     * Leases what is due and free slots allow; returns how many webhooks it took. With no
     * room it waits for a turn to end and reports work, so a busy queue is drained without
     * pausing between claims.
     */
    async step(): Promise<number> {
      if (stop.signal.aborted) return 0;
      if (active.size >= DISPATCH_CONCURRENCY) {
        await Promise.race(active);
        return 1;
      }
      const wait = lastClaim + CLAIM_INTERVAL_MS - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const now = Date.now();
      lastClaim = now;
      const turns = await claims.claim({ now: new Date(now).toISOString(), leaseUntil: new Date(now + LEASE_MS).toISOString(), room: DISPATCH_CONCURRENCY - active.size });
      for (const turn of turns) {
        const running: Promise<void> = run(turn)
          .catch((error: unknown) => log.warn({ err: error, webhook: turn.webhookId }, 'webhook turn failed; its lease runs out'))
          .finally(() => active.delete(running));
        active.add(running);
      }
      return turns.length;
    },

    /**
     * How long to wait after a step that found nothing: a short look while turns run (they
     * end and free room), else a rest until the soonest retry this dispatcher scheduled.
     */
    pause(now: number): number {
      if (active.size > 0) return DISPATCH_IDLE_MS;
      // A retry due by the last claim was taken by it, or is another instance's now. Pruned in
      // place: the array is the one every turn pushes its retries to.
      const { retries } = context;
      let kept = 0;
      for (const at of retries) if (at > lastClaim) retries[kept++] = at;
      retries.length = kept;
      const soonest = retries.reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);
      return Math.max(0, Math.min(settings.restMs ?? DISPATCH_REST_MS, soonest - now));
    },

    /** On shutdown: attempts in flight are cut, leases released, outcomes recorded. */
    async close(): Promise<void> {
      stop.abort();
      sender.cut();
      await Promise.allSettled([...active]);
      await settler.settle();
      sender.destroy();
    },
  };
}
