import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { checkedLookup, isInternalAddress } from './webhooks.address.js';
import { DELIVERY_TIMEOUT_MS } from './webhooks.events.js';
import type { WebhookSettings } from './webhooks.service.js';

/** What is read of an answer: only its status matters. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * `webhook-signature` per Standard Webhooks 1.0: `v1,` + base64 HMAC-SHA256 of
 * `id.timestamp.body` keyed with the secret's bytes (after `whsec_`). node:crypto, not the
 * `standardwebhooks` library's pure-JavaScript SHA-256: signing an 18 KB body took 14% of
 * the event loop under fan-out load (docs/performance.md); receivers verify it with the library.
 */
export function sign(secret: string, id: string, at: Date, body: Buffer): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${Math.floor(at.getTime() / 1000)}.`).update(body);
  return `v1,${mac.digest('base64')}`;
}

/** One attempt's destination and content. */
export interface Post {
  url: string;
  /** Each signs: `webhook-signature` carries one `v1,` signature per secret (two while a rotated-out secret still signs). */
  secrets: readonly string[];
  eventId: string;
  body: string;
}

export type Sender = ReturnType<typeof createSender>;

/**
 * Sends signed POSTs through keep-alive agents whose sockets connect only to addresses
 * checked at connect time (webhooks.address.ts); `sockets` bounds them per host.
 */
export function createSender(settings: WebhookSettings, sockets: number) {
  const lookup = checkedLookup(settings.allowPrivate, settings);
  // As many sockets per host as slots: webhooks of many tenants on one host never queue behind each other here.
  const agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: sockets, lookup }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: sockets, lookup }),
  };
  const requests = new Set<http.ClientRequest>();

  /** One POST; resolves with the status, or null when there was no answer within DELIVERY_TIMEOUT_MS. */
  function post(p: Post): Promise<number | null> {
    const url = new URL(p.url);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    // An address in the URL is never looked up: check it here.
    if (!settings.allowPrivate && isIP(host) !== 0 && isInternalAddress(host)) return Promise.resolve(null);
    const at = new Date();
    const body = Buffer.from(p.body);
    const client = url.protocol === 'https:' ? https : http;
    return new Promise((resolve) => {
      const finish = (status: number | null) => {
        clearTimeout(timer);
        requests.delete(request);
        resolve(status);
      };
      const headers = {
        'content-type': 'application/json',
        'content-length': body.length,
        'user-agent': 'Focus-Webhooks/1',
        'webhook-id': p.eventId,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': p.secrets.map((secret) => sign(secret, p.eventId, at, body)).join(' '),
      };
      const request = client.request(url, { method: 'POST', agent: agents[url.protocol as 'http:' | 'https:'], headers }, (response) => {
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) response.destroy();
        });
        const done = () => finish(response.statusCode ?? null);
        response.on('end', done);
        response.on('close', done);
        response.on('error', done);
      });
      // The whole attempt, connecting included, within the timeout (one timer: cheaper than a signal per attempt).
      const timer = setTimeout(() => request.destroy(new Error('webhook attempt timed out')), DELIVERY_TIMEOUT_MS);
      requests.add(request);
      request.on('error', () => finish(null));
      request.end(body);
    });
  }

  return {
    post,
    /** Cuts the attempts in flight: each resolves with null. */
    cut(): void {
      for (const request of requests) request.destroy(new Error('shutting down'));
    },
    destroy(): void {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}
