import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { type UserClient, describeEachDialect } from '../../../test/helpers/harness.js';
import { type JobsApp, createJobsApp } from '../../../test/helpers/jobs-app.js';
import { Receiver } from '../../../test/helpers/webhook-receiver.js';

/*
 * Contract section 9, delivery: a real receiver on 127.0.0.1 gets each event the webhook's
 * user may see, signed so that the `standardwebhooks` library verifies it, and retried
 * with the same `webhook-id` after failures (retry delays scaled down for the test).
 */

const SESSION = { org_id: 1, name: 'Deep work', type: 'standard', duration: 60, schedule: '2026-12-10', time: '9:00 AM' };

describeEachDialect('webhooks: delivery', (dialect) => {
  let t: JobsApp;
  let alice: UserClient;
  let bob: UserClient;
  let receiver: Receiver;
  beforeAll(async () => {
    t = await createJobsApp(dialect);
    await t.start();
    alice = await t.user('alice');
    bob = await t.user('bob');
    receiver = await new Receiver().start();
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.stop();
  });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.answer = () => 200;
  });

  async function subscribe(client: UserClient, events: string[], path = '') {
    const res = await client.post('/api/v1/webhooks', { url: receiver.url + path, events });
    expect(res.status, res.text).toBe(201);
    return res.body.data as { id: string; secret: string };
  }

  it('delivers a task event signed per Standard Webhooks: the library verifies it', async () => {
    const hook = await subscribe(alice, ['task.created', 'task.updated', 'task.deleted']);
    const session = (await alice.post('/api/v1/sessions', SESSION)).body.data;
    const task = (await alice.post('/api/v1/tasks', { context: 'Write the report', session_id: session.id })).body.data;
    await receiver.until((r) => r.length >= 1);
    const [first] = receiver.received;
    const verified = new Webhook(hook.secret).verify(first!.body, first!.headers as Record<string, string>) as { type: string; timestamp: string; data: { id: string } };
    expect(verified.type).toBe('task.created');
    expect(verified.data).toEqual(task);
    expect(Date.parse(verified.timestamp)).toBeGreaterThan(Date.now() - 60_000);
    expect(first!.headers['webhook-id']).toMatch(/^msg_[A-Za-z0-9_-]{22}$/);
    expect(first!.headers['content-type']).toBe('application/json');
    // Another secret does not verify it.
    expect(() => new Webhook('whsec_' + Buffer.alloc(32, 1).toString('base64')).verify(first!.body, first!.headers as Record<string, string>)).toThrow();

    await alice.put(`/api/v1/tasks/${task.id}`, { is_completed: true });
    await alice.delete(`/api/v1/tasks/${task.id}`);
    await receiver.until((r) => r.length >= 3);
    // Attempts run concurrently: receivers order events by `timestamp`, not by arrival.
    const payloads = receiver.payloads().sort((a, b) => a.timestamp.localeCompare(b.timestamp));
    expect(payloads.map((p) => p.type)).toEqual(['task.created', 'task.updated', 'task.deleted']);
    expect(payloads[2]?.data).toEqual({ id: task.id });
    await alice.delete(`/api/v1/webhooks/${hook.id}`);
  });

  it('retries after 500s with the same webhook-id, and lists the delivery', async () => {
    const hook = await subscribe(bob, ['task.created']);
    let failures = 0;
    receiver.answer = (r) => (r.body.includes('Retry me') && failures++ < 2 ? 500 : 204);
    const session = (await bob.post('/api/v1/sessions', SESSION)).body.data;
    await bob.post('/api/v1/tasks', { context: 'Retry me', session_id: session.id });
    await receiver.until((r) => r.filter((x) => x.body.includes('Retry me')).length >= 3);
    const mine = receiver.received.filter((x) => x.body.includes('Retry me'));
    expect(mine).toHaveLength(3);
    const ids = new Set(mine.map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(1);
    for (const r of mine) expect(() => new Webhook(hook.secret).verify(r.body, r.headers as Record<string, string>)).not.toThrow();
    let listed: { data: Record<string, unknown>[] } = { data: [] };
    for (let i = 0; i < 100; i++) {
      listed = (await bob.get(`/api/v1/webhooks/${hook.id}/deliveries`)).body;
      if (listed.data[0]?.delivered_at !== null && listed.data[0]?.delivered_at !== undefined) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(listed.data).toEqual([
      {
        event_id: [...ids][0],
        type: 'task.created',
        timestamp: expect.any(String),
        attempts: 3,
        last_status: 204,
        next_attempt_at: null,
        delivered_at: expect.any(String),
        failed_at: null,
      },
    ]);
    await bob.delete(`/api/v1/webhooks/${hook.id}`);
  });

  it('follows session visibility: private sessions only to who may see them, lost sight as session.deleted', async () => {
    const aliceHook = await subscribe(alice, ['session.created', 'session.updated', 'session.deleted', 'session.participation']);
    const bobHook = await subscribe(bob, ['session.created', 'session.updated', 'session.deleted', 'session.participation'], '?bob');
    // Each change is let through before the next: the data is the record as the user sees it when fanned out.
    let expected = 0;
    const then = async (count: number, action: () => Promise<{ status: number }>) => {
      expect((await action()).status).toBeLessThan(300);
      expected += count;
      await receiver.until((r) => r.length >= expected, 15_000);
    };
    let secret = { id: 0 };
    let open = { id: 0 };
    await then(1, async () => {
      const res = await alice.post('/api/v1/sessions', { ...SESSION, name: 'Private' });
      secret = res.body.data;
      return res;
    });
    await then(2, async () => {
      const res = await alice.post('/api/v1/sessions', { ...SESSION, name: 'Open', is_public: true });
      open = res.body.data;
      return res;
    });
    await then(2, () => bob.post(`/api/v1/sessions/${open.id}/join`));
    await then(2, () => alice.put(`/api/v1/sessions/${open.id}`, { is_public: false }));
    await then(2, () => bob.post(`/api/v1/sessions/${open.id}/leave`));
    await then(1, () => alice.delete(`/api/v1/sessions/${secret.id}`));
    await new Promise((r) => setTimeout(r, 800));
    const got = receiver.received.map((r) => {
      // A participation carries its session as `data.session`.
      const p = JSON.parse(r.body) as { type: string; data: { id: number; name?: string; session?: { name?: string } } };
      const who = new Webhook(aliceHook.secret);
      let to = 'bob';
      try {
        who.verify(r.body, r.headers as Record<string, string>);
        to = 'alice';
      } catch {
        new Webhook(bobHook.secret).verify(r.body, r.headers as Record<string, string>);
      }
      return `${to} ${p.type} ${p.data.session?.name ?? p.data.name ?? p.data.id}`;
    });
    expect(got.filter((g) => g.startsWith('alice'))).toEqual([
      'alice session.created Private',
      'alice session.created Open',
      'alice session.participation Open',
      'alice session.updated Open',
      'alice session.participation Open',
      `alice session.deleted ${secret.id}`,
    ]);
    // Bob never hears of the private session; he joined the open one, so still sees it once private; after leaving he does not.
    expect(got.filter((g) => g.startsWith('bob'))).toEqual([
      'bob session.created Open',
      'bob session.participation Open',
      'bob session.updated Open',
      `bob session.deleted ${open.id}`,
    ]);
    await alice.delete(`/api/v1/webhooks/${aliceHook.id}`);
    await bob.delete(`/api/v1/webhooks/${bobHook.id}`);
  });

  it('lists deliveries latest first, in pages', async () => {
    const hook = await subscribe(alice, ['task.created']);
    const session = (await alice.post('/api/v1/sessions', SESSION)).body.data;
    for (const context of ['one', 'two', 'three']) await alice.post('/api/v1/tasks', { context, session_id: session.id });
    await receiver.until((r) => r.length >= 3);
    const first = await alice.get(`/api/v1/webhooks/${hook.id}/deliveries?limit=2`);
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(2);
    const rest = await alice.get(`/api/v1/webhooks/${hook.id}/deliveries?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`);
    expect(rest.body.data).toHaveLength(1);
    expect(rest.body.next_cursor).toBeNull();
    const byId = new Map(receiver.received.map((r) => [r.headers['webhook-id'], (JSON.parse(r.body) as { data: { context: string } }).data.context]));
    expect([...first.body.data, ...rest.body.data].map((d: { event_id: string }) => byId.get(d.event_id))).toEqual(['three', 'two', 'one']);
    expect((await alice.get(`/api/v1/webhooks/${hook.id}/deliveries?limit=0`)).status).toBe(422);
    expect((await alice.get(`/api/v1/webhooks/${hook.id}/deliveries?cursor=garbage`)).status).toBe(422);
    await alice.delete(`/api/v1/webhooks/${hook.id}`);
  });

  it('stops delivering to a deleted webhook', async () => {
    const hook = await subscribe(alice, ['session.created']);
    await alice.delete(`/api/v1/webhooks/${hook.id}`);
    await alice.post('/api/v1/sessions', SESSION);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(receiver.received).toEqual([]);
  });
});
