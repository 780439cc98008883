import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { Storage } from '../../storage/database.js';
import { checkedLookup, isInternalAddress } from './webhooks.address.js';
import { type AttemptOutcome, type Release, TURN_DELIVERIES, type Turn, createClaims } from './webhooks.claims.js';
import { DELIVERY_TIMEOUT_MS, nextAttemptDelay } from './webhooks.events.js';
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
/** Outcomes are recorded this long after the first of a batch ended: one transaction for many attempts. */
const SETTLE_DELAY_MS = 50;
/** What is read of an answer: only its status matters. */
const MAX_ANSWER_BYTES = 64 * 1024;

type Attempt = Turn['deliveries'][number];

export type Dispatcher = ReturnType<typeof createDispatcher>;

/**
 * Sends due deliveries: leases webhooks fairly (webhooks.claims.ts: across users, then
 * webhooks; shared with other instances), sends each webhook's deliveries one after
 * another signed per Standard Webhooks 1.0, at most DISPATCH_CONCURRENCY webhooks at once,
 * and records outcomes in batches. A 2xx within 10 s is delivered; anything else (a 3xx
 * included: redirects are not followed) is retried on the schedule of RETRY_DELAYS_MS,
 * then failed. Sockets connect only to addresses checked at connect time
 * (webhooks.address.ts). Right before each attempt the webhook is checked to exist: a
 * deleted one is sent nothing more, queued deliveries included.
 */
export function createDispatcher(storage: Storage, settings: WebhookSettings, log: { warn(obj: object, msg: string): void }) {
  const claims = createClaims(storage);
  const lookup = checkedLookup(settings.allowPrivate, settings);
  // As many sockets per host as slots: webhooks of many tenants on one host never queue behind each other here.
  const agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: DISPATCH_CONCURRENCY * ATTEMPTS_PER_WEBHOOK, lookup }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: DISPATCH_CONCURRENCY * ATTEMPTS_PER_WEBHOOK, lookup }),
  };
  const stop = new AbortController();
  const active = new Set<Promise<void>>();
  const requests = new Set<http.ClientRequest>();
  let outcomes: AttemptOutcome[] = [];
  let released: Release[] = [];
  let settling: Promise<void> | undefined;
  let lastClaim = 0;

  /** One POST; resolves with the status, or null when there was no answer. */
  function post(turn: Turn, d: Attempt): Promise<number | null> {
    const url = new URL(turn.url);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    // An address in the URL is never looked up: check it here.
    if (!settings.allowPrivate && isIP(host) !== 0 && isInternalAddress(host)) return Promise.resolve(null);
    const at = new Date();
    const signature = new Webhook(turn.secret).sign(d.event_id, at, d.body);
    const body = Buffer.from(d.body);
    const client = url.protocol === 'https:' ? https : http;
    return new Promise((resolve) => {
      const finish = (status: number | null) => {
        clearTimeout(timer);
        requests.delete(request);
        resolve(status);
      };
      const request = client.request(
        url,
        {
          method: 'POST',
          agent: agents[url.protocol as 'http:' | 'https:'],
          headers: {
            'content-type': 'application/json',
            'content-length': body.length,
            'user-agent': 'Focus-Webhooks/1',
            'webhook-id': d.event_id,
            'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
            'webhook-signature': signature,
          },
        },
        (response) => {
          let read = 0;
          response.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read > MAX_ANSWER_BYTES) response.destroy();
          });
          const done = () => finish(response.statusCode ?? null);
          response.on('end', done);
          response.on('close', done);
          response.on('error', done);
        },
      );
      // The whole attempt, connecting included, within the timeout (one timer: cheaper than a signal per attempt).
      const timer = setTimeout(() => request.destroy(new Error('webhook attempt timed out')), DELIVERY_TIMEOUT_MS);
      requests.add(request);
      request.on('error', () => finish(null));
      request.end(body);
    });
  }

  function outcomeOf(d: Attempt, status: number | null): AttemptOutcome {
    const at = new Date();
    if (status !== null && status >= 200 && status < 300) return { id: d.id, kind: 'delivered', status, at: at.toISOString() };
    const delay = nextAttemptDelay(d.attempts + 1, settings.retryScale);
    if (delay === undefined) return { id: d.id, kind: 'failed', status, at: at.toISOString() };
    return { id: d.id, kind: 'retry', status, at: at.toISOString(), next: new Date(at.getTime() + delay).toISOString() };
  }

  /** Writes the outcomes gathered so far in one transaction; one writer at a time. */
  function settle(): Promise<void> {
    settling ??= (async () => {
      try {
        // Gathers what ends meanwhile into the same transaction (see step()).
        if (!stop.signal.aborted) await new Promise((resolve) => setTimeout(resolve, SETTLE_DELAY_MS));
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

  /** A batch of a turn: ATTEMPTS_PER_WEBHOOK at a time while the lease has room for a whole attempt; false when cut short. */
  async function send(turn: Turn): Promise<boolean> {
    const leaseEnd = Date.parse(turn.leaseUntil);
    let next = 0;
    let over = false;
    const worker = async () => {
      while (!over) {
        // Taken before waiting: the other worker must not take the same one.
        const d = turn.deliveries[next++];
        if (d === undefined) break;
        if (stop.signal.aborted || Date.now() + DELIVERY_TIMEOUT_MS > leaseEnd || !(await claims.alive(turn.webhookId))) {
          over = true;
          break;
        }
        const status = await post(turn, d);
        // Cut by shutdown: not attempted after all, sent again later.
        if (stop.signal.aborted && status === null) continue;
        outcomes.push(outcomeOf(d, status));
        void settle();
      }
    };
    await Promise.all(Array.from({ length: ATTEMPTS_PER_WEBHOOK }, worker));
    return !over;
  }

  /** One webhook's turn: batches while it has a full batch due and keeps its lease, then the lease is released. */
  async function run(turn: Turn): Promise<void> {
    for (let more = true; more; ) {
      const full = turn.deliveries.length === TURN_DELIVERIES;
      more = (await send(turn)) && full && !stop.signal.aborted;
      if (!more) break;
      // Recorded first: the next batch must not take what was just sent.
      await settle();
      const now = Date.now();
      more = await claims.renew(turn, { now: new Date(now).toISOString(), leaseUntil: new Date(now + LEASE_MS).toISOString() });
      if (turn.deliveries.length === 0) more = false;
    }
    released.push({ webhookId: turn.webhookId, leaseUntil: turn.leaseUntil, at: new Date().toISOString() });
    void settle();
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

    /** On shutdown: attempts in flight are cut, leases released, outcomes recorded. */
    async close(): Promise<void> {
      stop.abort();
      for (const request of requests) request.destroy(new Error('shutting down'));
      await Promise.allSettled([...active]);
      await settle();
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}
