import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { expect, it } from 'vitest';
import { sign } from './webhooks.sender.js';

/* The node:crypto signature is the one Standard Webhooks libraries compute and verify. */

it('signs as the standardwebhooks library does, for any secret, id, instant and body', () => {
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 24, maxLength: 64 }), fc.string({ minLength: 1 }), fc.integer({ min: 0, max: 4_000_000_000 }), fc.string({ unit: 'grapheme', maxLength: 2_000 }), (key, id, seconds, body) => {
      const secret = `whsec_${Buffer.from(key).toString('base64')}`;
      const at = new Date(seconds * 1000 + 999);
      expect(sign(secret, id, at, Buffer.from(body))).toBe(new Webhook(secret).sign(id, at, body));
    }),
    { numRuns: 200 },
  );
});

it('is verified by the library as a receiver checks it', () => {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const body = JSON.stringify({ type: 'task.created', data: { title: 'Zoë ✓' } });
  const at = new Date();
  const headers = { 'webhook-id': 'evt_1', 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': sign(secret, 'evt_1', at, Buffer.from(body)) };
  expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
});
