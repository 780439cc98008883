import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { Storage } from '../../storage/database.js';
import { checkedLookup, isInternalAddress } from './webhooks.address.js';
import { DELIVERY_TIMEOUT_MS, nextAttemptDelay } from './webhooks.events.js';
import { type AttemptOutcome, type ClaimedDelivery, createWebhooksRepository } from './webhooks.repository.js';
import type { WebhookSettings } from './webhooks.service.js';

/** Attempts in flight at once per instance: a slow receiver holds one of these, never an API request. */
export const DISPATCH_CONCURRENCY = 16;
/** Claimed at most per instance (sending or queued to send): bounds the queue a crash leaves to its leases. */
const CLAIM_AHEAD = 2 * DISPATCH_CONCURRENCY;
/**
 * A claim outlives the longest wait in this instance's queue plus its own attempt (25 s);
 * after a crash, what the instance had claimed is attempted again once its lease ends.
 */
export const LEASE_MS = (CLAIM_AHEAD / DISPATCH_CONCURRENCY + 0.5) * DELIVERY_TIMEOUT_MS;
/** Outcomes are recorded this long after the first of a batch ended: one transaction for many attempts. */
const SETTLE_DELAY_MS = 50;
/** What is read of an answer: only its status matters. */
const MAX_ANSWER_BYTES = 64 * 1024;

export type Dispatcher = ReturnType<typeof createDispatcher>;

/**
 * Sends due deliveries: claims a batch (shared with other instances through the queue's
 * row locks and leases), POSTs each signed per Standard Webhooks 1.0 with at most
 * DISPATCH_CONCURRENCY in flight, and records outcomes in batches. A 2xx within 10 s is
 * delivered; anything else (a 3xx included: redirects are not followed) is retried on the
 * schedule of RETRY_DELAYS_MS, then failed. Sockets connect only to addresses checked at
 * connect time (webhooks.address.ts).
 */
export function createDispatcher(storage: Storage, settings: WebhookSettings, log: { warn(obj: object, msg: string): void }) {
  const repo = createWebhooksRepository(storage);
  const lookup = checkedLookup(settings.allowPrivate, settings);
  const agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: DISPATCH_CONCURRENCY, lookup }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: DISPATCH_CONCURRENCY, lookup }),
  };
  const stop = new AbortController();
  const queue: ClaimedDelivery[] = [];
  const active = new Set<Promise<void>>();
  const requests = new Set<http.ClientRequest>();
  let outcomes: AttemptOutcome[] = [];
  let settling: Promise<void> | undefined;

  /** One POST; resolves with the status, or null when there was no answer. */
  function post(d: ClaimedDelivery): Promise<number | null> {
    const url = new URL(d.url);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    // An address in the URL is never looked up: check it here.
    if (!settings.allowPrivate && isIP(host) !== 0 && isInternalAddress(host)) return Promise.resolve(null);
    const at = new Date();
    const signature = new Webhook(d.secret).sign(d.event_id, at, d.payload);
    const body = Buffer.from(d.payload);
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

  function outcomeOf(d: ClaimedDelivery, status: number | null): AttemptOutcome {
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
        while (outcomes.length > 0) {
          const batch = outcomes;
          outcomes = [];
          try {
            await repo.settle(batch);
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

  function pump(): void {
    while (active.size < DISPATCH_CONCURRENCY && queue.length > 0 && !stop.signal.aborted) {
      const d = queue.shift() as ClaimedDelivery;
      const attempt = post(d).then((status) => {
        outcomes.push(stop.signal.aborted && status === null ? { id: d.id, kind: 'released' } : outcomeOf(d, status));
        active.delete(attempt);
        void settle();
        pump();
      });
      active.add(attempt);
    }
  }

  return {
    /**
     * Claims what is due and free capacity allows; returns how many it claimed. With no
     * room it waits for an attempt to end and reports work, so that a busy queue is drained
     * without pausing between claims.
     */
    async step(): Promise<number> {
      if (stop.signal.aborted) return 0;
      // Claims in batches (half the capacity at least): every write transaction costs the API's
      // SQLite connection a turn and ends its read caches' validity (Storage.dataVersion).
      if (CLAIM_AHEAD - queue.length - active.size < CLAIM_AHEAD / 2 && active.size > 0) {
        await Promise.race(active);
        return 1;
      }
      const room = CLAIM_AHEAD - queue.length - active.size;
      const now = Date.now();
      const claimed = await repo.claim({ now: new Date(now).toISOString(), leaseUntil: new Date(now + LEASE_MS).toISOString(), limit: room });
      queue.push(...claimed);
      pump();
      return claimed.length;
    },

    /** On shutdown: attempts in flight are cut, unsent claims released, outcomes recorded. */
    async close(): Promise<void> {
      stop.abort();
      for (const request of requests) request.destroy(new Error('shutting down'));
      for (const d of queue.splice(0)) outcomes.push({ id: d.id, kind: 'released' });
      await Promise.allSettled([...active]);
      await settle();
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}
