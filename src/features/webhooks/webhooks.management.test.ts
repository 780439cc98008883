import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { describeEachDialect } from '../../../test/helpers/harness.js';
import { http } from '../../../test/helpers/http.js';
import { type JobsApp, createJobsApp } from '../../../test/helpers/jobs-app.js';
import { type Received, Receiver } from '../../../test/helpers/webhook-receiver.js';

/*
 * Contract sections 10 and 13, webhook management, over a real socket with a real receiver
 * on 127.0.0.1: PATCH checks as registration does, a rotated secret keeps signing beside the
 * new one (each verifies with the `standardwebhooks` library on its own), a test event goes
 * to one webhook, and an inactive or deleted webhook is sent nothing more, queued ones included.
 */

const SESSION = { org_id: 1, name: 'Hooks', type: 'standard', duration: 60, schedule: '2026-12-10', time: '9:00 AM' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
type Data = Record<string, unknown>;

describeEachDialect('webhooks: management', (dialect) => {
  let t: JobsApp;
  let base = '';
  let alice = '';
  let bob = '';
  let receiver: Receiver;
  const api = (token: string, method: string, path: string, body?: unknown) => http(base, method, `/api/v1${path}`, token, body);
  const data = (res: { body: unknown }) => (res.body as { data: Data }).data;
  const at = (path: string) => receiver.received.filter((r) => r.path === path);

  beforeAll(async () => {
    t = await createJobsApp(dialect);
    await t.start();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    alice = (await t.user('alice')).token as string;
    bob = (await t.user('bob')).token as string;
    receiver = await new Receiver().start();
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.stop();
  });
  beforeEach(() => {
    receiver.answer = () => 200;
  });

  async function subscribe(path: string, events = ['task.created']) {
    const res = await api(alice, 'POST', '/webhooks', { url: receiver.base + path, events });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return data(res) as { id: string; secret: string };
  }

  async function addTask(context: string) {
    const session = data(await api(alice, 'POST', '/sessions', SESSION));
    expect((await api(alice, 'POST', '/tasks', { context, session_id: session.id })).status).toBe(201);
  }

  it('changes a webhook field by field, checked as at registration; another user’s is 404', async () => {
    const hook = await subscribe('/edit');
    const changed = await api(alice, 'PATCH', `/webhooks/${hook.id}`, { description: 'Renamed', events: ['task.updated', 'session.started'] });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(data(changed)).toMatchObject({ id: hook.id, url: `${receiver.base}/edit`, events: ['task.updated', 'session.started'], description: 'Renamed', active: true });
    const moved = await api(alice, 'PATCH', `/webhooks/${hook.id}`, { url: `${receiver.base}/moved`, description: null });
    expect(data(moved)).toMatchObject({ url: `${receiver.base}/moved`, description: null, events: ['task.updated', 'session.started'] });
    expect(data(await api(alice, 'GET', `/webhooks/${hook.id}`))).toEqual(data(moved));

    const cases: [unknown, string][] = [
      [{ events: [] }, '/events'],
      [{ events: ['task.exploded'] }, '/events/0'],
      [{ url: 'ftp://example.com/x' }, '/url'],
      [{ url: 'https://user:pw@example.com/x' }, '/url'],
      [{ active: 'yes' }, '/active'],
      [{ description: 'x'.repeat(501) }, '/description'],
      [{ extra: 1 }, '/extra'],
    ];
    for (const [body, path] of cases) {
      const res = await api(alice, 'PATCH', `/webhooks/${hook.id}`, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(JSON.stringify(res.body), JSON.stringify(body)).toContain(`"path":"${path}"`);
    }
    expect((await api(alice, 'PATCH', `/webhooks/${hook.id}`, {})).status).toBe(422);
    for (const [method, path, body] of [
      ['PATCH', '', { active: false }],
      ['POST', '/rotate-secret', undefined],
      ['POST', '/test', undefined],
    ] as const) {
      expect((await api(bob, method, `/webhooks/${hook.id}${path}`, body)).status, method + path).toBe(404);
      expect((await api(alice, method, `/webhooks/999999${path}`, body)).status, method + path).toBe(404);
    }
    expect(data(await api(alice, 'GET', `/webhooks/${hook.id}`))).toEqual(data(moved));
  });

  it('sends a webhook.test event now, to that webhook only, whatever it subscribes to', async () => {
    const one = await subscribe('/one', ['session.ended']);
    await subscribe('/two', ['session.ended']);
    const queued = await api(alice, 'POST', `/webhooks/${one.id}/test`);
    expect(queued.status, JSON.stringify(queued.body)).toBe(202);
    expect(data(queued)).toMatchObject({ type: 'webhook.test', attempts: 0, delivered_at: null, failed_at: null });
    await receiver.until(() => at('/one').length >= 1);
    const [got] = at('/one') as [Received];
    const payload = new Webhook(one.secret).verify(got.body, got.headers as Record<string, string>) as { type: string; data: Data };
    expect(payload).toMatchObject({ type: 'webhook.test', data: { id: one.id } });
    expect(got.headers['webhook-id']).toBe(data(queued).event_id);
    await sleep(500);
    expect(at('/two')).toHaveLength(0);
    const listed = (await api(alice, 'GET', `/webhooks/${one.id}/deliveries`)).body as { data: Data[] };
    expect(listed.data[0]).toMatchObject({ event_id: data(queued).event_id, type: 'webhook.test' });
  });

  it('rotates the secret: for 24 h two v1 signatures, each verifying with its own secret', async () => {
    const hook = await subscribe('/rotate');
    const rotated = await api(alice, 'POST', `/webhooks/${hook.id}/rotate-secret`);
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    const { secret, previous_secret_expires_at } = data(rotated) as { secret: string; previous_secret_expires_at: string };
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secret).not.toBe(hook.secret);
    expect(Math.abs(Date.parse(previous_secret_expires_at) - Date.now() - 24 * 3_600_000)).toBeLessThan(60_000);
    expect(JSON.stringify((await api(alice, 'GET', `/webhooks/${hook.id}`)).body)).not.toContain('whsec_');

    const verifier = (s: string) => (r: Received) => new Webhook(s).verify(r.body, r.headers as Record<string, string>);
    await api(alice, 'POST', `/webhooks/${hook.id}/test`);
    await receiver.until(() => at('/rotate').length >= 1);
    const [first] = at('/rotate') as [Received];
    expect(String(first.headers['webhook-signature']).split(' ').map((s) => s.slice(0, 3))).toEqual(['v1,', 'v1,']);
    expect(() => verifier(hook.secret)(first)).not.toThrow();
    expect(() => verifier(secret)(first)).not.toThrow();
    expect(() => verifier(`whsec_${Buffer.alloc(32, 9).toString('base64')}`)(first)).toThrow();

    // Rotating again within the 24 h: the newest two sign, the first secret no longer.
    const third = data(await api(alice, 'POST', `/webhooks/${hook.id}/rotate-secret`)).secret as string;
    await api(alice, 'POST', `/webhooks/${hook.id}/test`);
    await receiver.until(() => at('/rotate').length >= 2);
    const second = at('/rotate')[1] as Received;
    expect(() => verifier(secret)(second)).not.toThrow();
    expect(() => verifier(third)(second)).not.toThrow();
    expect(() => verifier(hook.secret)(second)).toThrow();
  });

  it('sends an inactive webhook nothing more, queued deliveries included; re-activated, only new events', async () => {
    const hook = await subscribe('/off');
    receiver.answer = (r) => (r.path === '/off' ? 500 : 200);
    await addTask('Queued');
    await receiver.until(() => at('/off').length >= 1);
    const off = await api(alice, 'PATCH', `/webhooks/${hook.id}`, { active: false });
    expect(data(off)).toMatchObject({ active: false });
    // An attempt begun before the answer may still arrive; none begins after it.
    await sleep(300);
    const before = at('/off').length;
    const listed = (await api(alice, 'GET', `/webhooks/${hook.id}/deliveries`)).body as { data: Data[] };
    expect(listed.data).toHaveLength(1);
    expect(listed.data[0]?.next_attempt_at).toBeNull();
    expect(listed.data[0]?.failed_at).not.toBeNull();
    await addTask('While off');
    expect((await api(alice, 'POST', `/webhooks/${hook.id}/test`)).status).toBe(409);
    await sleep(1_500);
    expect(at('/off')).toHaveLength(before);
    expect(((await api(alice, 'GET', `/webhooks/${hook.id}/deliveries`)).body as { data: Data[] }).data).toHaveLength(1);

    receiver.answer = () => 200;
    expect(data(await api(alice, 'PATCH', `/webhooks/${hook.id}`, { active: true }))).toMatchObject({ active: true });
    await addTask('After');
    await receiver.until(() => at('/off').some((r) => r.body.includes('After')));
    await sleep(500);
    const bodies = at('/off').slice(before).map((r) => r.body);
    expect(bodies.filter((b) => b.includes('After'))).toHaveLength(1);
    expect(bodies.some((b) => b.includes('Queued') || b.includes('While off'))).toBe(false);
  });

  it('sends a deleted webhook nothing more, queued deliveries included', async () => {
    const hook = await subscribe('/gone');
    receiver.answer = (r) => (r.path === '/gone' ? 500 : 200);
    await addTask('Doomed');
    await receiver.until(() => at('/gone').length >= 1);
    expect((await api(alice, 'DELETE', `/webhooks/${hook.id}`)).status).toBe(204);
    await sleep(300);
    const before = at('/gone').length;
    await sleep(1_500);
    expect(at('/gone')).toHaveLength(before);
  });

  it('starts the resting clock when a webhook is created listening for time events: nothing from before is raised', async () => {
    // Every webhook turned off: none listens for time events, and the clock rests.
    const all = (await api(alice, 'GET', '/webhooks')).body as { data: { id: string }[] };
    for (const hook of all.data) expect((await api(alice, 'PATCH', `/webhooks/${hook.id}`, { active: false })).status).toBe(200);
    const stale = new Date(Date.now() - 3 * 3_600_000).toISOString();
    await t.storage.db.updateTable('webhook_state').set({ instant: stale }).where('name', '=', 'clock').execute();
    const listening = Date.now();
    await subscribe('/timed', ['session.started']);
    const clock = await t.storage.db.selectFrom('webhook_state').select('instant').where('name', '=', 'clock').executeTakeFirstOrThrow();
    expect(Date.parse(clock.instant ?? '')).toBeGreaterThanOrEqual(listening);
  });
});
