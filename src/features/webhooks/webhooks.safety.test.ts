import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect, type UserClient } from '../../../test/helpers/harness.js';
import { type JobsApp, createJobsApp } from '../../../test/helpers/jobs-app.js';
import { Receiver } from '../../../test/helpers/webhook-receiver.js';
import { toJson } from '../../storage/columns.js';
import { isInternalAddress } from './webhooks.address.js';
import { MAX_PAYLOAD_BYTES, RETRY_DELAYS_MS, nextAttemptDelay } from './webhooks.events.js';
import { eventOf, newEventId } from './webhooks.payload.js';

/*
 * Contract section 9, safety at delivery: the address is checked again when the socket
 * connects (a name that resolved publicly at registration and internally now, as with DNS
 * rebinding, reaches nothing), redirects are not followed, and the retry schedule is one
 * constant that ends in `failed`.
 */

describeEachDialect('webhooks: safety at delivery', (dialect) => {
  let t: JobsApp;
  let alice: UserClient;
  let receiver: Receiver;
  beforeAll(async () => {
    // Private destinations refused: the receiver on 127.0.0.1 must stay unreachable.
    t = await createJobsApp(dialect, { allowPrivate: false, retryScale: 0.001 });
    await t.start();
    alice = await t.user('alice');
    receiver = await new Receiver().start();
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.stop();
  });

  /** A webhook stored as if its host had resolved to a public address at registration. */
  async function storedHook(url: string): Promise<number> {
    const me = await t.storage.db.selectFrom('users').select('id').where('handle', '=', 'alice').executeTakeFirstOrThrow();
    const row = await t.storage.db
      .insertInto('webhooks')
      .values({ user_id: me.id, url, events: toJson(['task.created']), description: null, secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`, created_at: new Date().toISOString() })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  }

  it('never connects to an internal address at delivery, by name (rebinding) or by literal', async () => {
    const port = new URL(receiver.url).port;
    const byName = await storedHook(`http://localhost:${port}/hook`);
    const byLiteral = await storedHook(`http://127.0.0.1:${port}/hook`);
    const session = (await alice.post('/api/v1/sessions', { org_id: 1, name: 'S', type: 'standard', duration: 30, schedule: '2026-12-01', time: '9:00 AM' })).body.data;
    expect((await alice.post('/api/v1/tasks', { context: 'Nowhere', session_id: session.id })).status).toBe(201);
    for (const id of [byName, byLiteral]) {
      let listed: { attempts: number; last_status: number | null }[] = [];
      for (let i = 0; i < 100 && (listed[0]?.attempts ?? 0) < 2; i++) {
        listed = (await alice.get(`/api/v1/webhooks/${id}/deliveries`)).body.data;
        await new Promise((r) => setTimeout(r, 100));
      }
      // Attempted and retried, each time without an answer: the socket was never opened.
      expect(listed[0]?.attempts).toBeGreaterThanOrEqual(2);
      expect(listed[0]?.last_status).toBeNull();
    }
    expect(receiver.received).toEqual([]);
  });

  it('classifies addresses with net.BlockList, IPv4-mapped IPv6 by the IPv4 address it carries', () => {
    for (const a of ['127.0.0.1', '10.0.0.1', '172.31.255.255', '192.168.0.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fd12::1', 'fe80::1', 'ff02::1', '::ffff:10.0.0.1', '::ffff:7f00:1', '64:ff9b::a00:1', 'not-an-ip']) {
      expect(isInternalAddress(a), a).toBe(true);
    }
    for (const a of ['93.184.215.14', '1.1.1.1', '2606:4700:4700::1111', '::ffff:93.184.215.14', '172.32.0.1', '100.128.0.1']) expect(isInternalAddress(a), a).toBe(false);
  });
});

describeEachDialect('webhooks: redirects', (dialect) => {
  let t: JobsApp;
  let receiver: Receiver;
  beforeAll(async () => {
    t = await createJobsApp(dialect);
    await t.start();
    receiver = await new Receiver().start();
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.stop();
  });

  it('treats a 3xx as a failed attempt and never follows it', async () => {
    const alice = await t.user('alice');
    receiver.answer = (_r, i) => (i === 0 ? 302 : 200);
    const hook = (await alice.post('/api/v1/webhooks', { url: receiver.url, events: ['task.created'] })).body.data;
    const session = (await alice.post('/api/v1/sessions', { org_id: 1, name: 'S', type: 'standard', duration: 30, schedule: '2026-12-01', time: '9:00 AM' })).body.data;
    await alice.post('/api/v1/tasks', { context: 'Redirected', session_id: session.id });
    await receiver.until((r) => r.length >= 2);
    // Both requests to the webhook's own URL, the same event: the retry, not a followed redirect.
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([receiver.received[0]?.headers['webhook-id'], receiver.received[0]?.headers['webhook-id']]);
    let listed: { attempts: number; last_status: number | null; delivered_at: string | null }[] = [];
    for (let i = 0; i < 50 && listed[0]?.delivered_at == null; i++) {
      listed = (await alice.get(`/api/v1/webhooks/${hook.id}/deliveries`)).body.data;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(listed[0]).toMatchObject({ attempts: 2, last_status: 200 });
  });
});

it('retries on one schedule, ±20 %, then gives up', () => {
  expect(RETRY_DELAYS_MS).toEqual([5_000, 20_000, 120_000, 600_000, 3_600_000, 21_600_000, 86_400_000]);
  expect(nextAttemptDelay(1, 1, () => 0)).toBe(4_000);
  expect(nextAttemptDelay(1, 1, () => 1)).toBe(6_000);
  expect(nextAttemptDelay(7, 1, () => 0.5)).toBe(86_400_000);
  expect(nextAttemptDelay(8)).toBeUndefined();
  // The test-only scale shrinks every step alike.
  expect(nextAttemptDelay(3, 0.001, () => 0.5)).toBe(120);
});

it(`sends data over ${MAX_PAYLOAD_BYTES / 1024} KiB as {id} only (a participation: its session)`, () => {
  const now = new Date().toISOString();
  // Records are passed as values (a literal's extra fields would be refused by the type).
  const smallData = { id: '7', context: 'x' };
  const bigData = { id: '7', context: 'x'.repeat(MAX_PAYLOAD_BYTES) };
  const small = eventOf({ webhookId: 1, type: 'task.updated', timestamp: now, data: smallData });
  expect(JSON.parse(small.body)).toEqual({ type: 'task.updated', timestamp: now, data: { id: '7', context: 'x' } });
  const big = eventOf({ webhookId: 1, type: 'task.updated', timestamp: now, data: bigData });
  expect(JSON.parse(big.body)).toEqual({ type: 'task.updated', timestamp: now, data: { id: '7' } });
  expect(newEventId()).toMatch(/^msg_/);
  expect(newEventId()).not.toBe(newEventId());
  // A participation keeps what happened; only its session is cut.
  const joined = { action: 'join', occurrence_date: '2026-12-10', user: null, session: { id: 7, name: 'x'.repeat(MAX_PAYLOAD_BYTES) } };
  const cut = eventOf({ webhookId: 1, type: 'session.participation', timestamp: now, data: joined });
  expect(JSON.parse(cut.body)).toEqual({ type: 'session.participation', timestamp: now, data: { action: 'join', occurrence_date: '2026-12-10', user: null, session: { id: 7 } } });
});
