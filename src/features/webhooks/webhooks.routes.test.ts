import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestApp, type UserClient, createTestApp, describeEachDialect } from '../../../test/helpers/harness.js';
import { MAX_WEBHOOKS_PER_USER, WEBHOOK_EVENTS } from './webhooks.events.js';

/*
 * Contract section 9, the routes: a webhook belongs to its user (others get 404), its
 * secret is shown once, bad input is a clear 422, and a destination inside the network is
 * refused unless WEBHOOK_ALLOW_PRIVATE=1.
 */

describeEachDialect('webhooks: routes', (dialect) => {
  let t: TestApp;
  let alice: UserClient;
  let bob: UserClient;
  beforeAll(async () => {
    // Private destinations are refused here (the default): the receivers of other suites are on 127.0.0.1.
    t = await createTestApp(dialect);
    alice = await t.user('alice', [1]);
    bob = await t.user('bob', [1]);
  });
  afterAll(() => t.close());

  const hook = { url: 'https://93.184.215.14/focus', events: ['task.created', 'session.started'] };

  it('creates a webhook: its secret once, then never again', async () => {
    const created = await alice.post('/api/v1/webhooks', { ...hook, description: 'Chat status' });
    expect(created.status, created.text).toBe(201);
    const { data } = created.body;
    expect(data.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(data.secret.slice(6), 'base64')).toHaveLength(32);
    expect(created.headers.location).toBe(`/api/v1/webhooks/${data.id}`);
    expect(data).toMatchObject({ url: hook.url, events: hook.events, description: 'Chat status' });

    const got = await alice.get(`/api/v1/webhooks/${data.id}`);
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual({ id: data.id, url: hook.url, events: hook.events, description: 'Chat status', active: true, created_at: data.created_at });
    const listed = await alice.get('/api/v1/webhooks');
    expect(listed.body.data.map((w: { id: string }) => w.id)).toContain(data.id);
    expect(listed.text).not.toContain('whsec_');
    const deliveries = await alice.get(`/api/v1/webhooks/${data.id}/deliveries`);
    expect(deliveries.status).toBe(200);
    expect(deliveries.body).toEqual({ data: [], next_cursor: null });
  });

  it('hides a webhook from every other user: 404 to read, list, delete or see its deliveries', async () => {
    const { data } = (await alice.post('/api/v1/webhooks', hook)).body;
    expect((await bob.get(`/api/v1/webhooks/${data.id}`)).status).toBe(404);
    expect((await bob.get(`/api/v1/webhooks/${data.id}/deliveries`)).status).toBe(404);
    expect((await bob.delete(`/api/v1/webhooks/${data.id}`)).status).toBe(404);
    expect((await bob.get('/api/v1/webhooks')).body.data).toEqual([]);
    expect((await alice.get(`/api/v1/webhooks/${data.id}`)).status).toBe(200);
    expect((await alice.delete(`/api/v1/webhooks/${data.id}`)).status).toBe(204);
    expect((await alice.get(`/api/v1/webhooks/${data.id}`)).status).toBe(404);
    expect((await alice.delete(`/api/v1/webhooks/${data.id}`)).status).toBe(404);
    expect((await t.anonymous.get('/api/v1/webhooks')).status).toBe(401);
  });

  it('refuses bad bodies with 422 naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ ...hook, events: ['task.exploded'] }, '/events/0'],
      [{ ...hook, events: [] }, '/events'],
      [{ ...hook, events: ['task.created', 'task.created'] }, '/events'],
      [{ ...hook, url: 'ftp://example.com/x' }, '/url'],
      [{ ...hook, url: 'not a url' }, '/url'],
      [{ ...hook, url: 'https://user:pw@example.com/x' }, '/url'],
      [{ events: hook.events }, '/url'],
      [{ ...hook, extra: 1 }, '/extra'],
    ];
    for (const [body, path] of cases) {
      const res = await alice.post('/api/v1/webhooks', body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.errors.map((e: { path: string }) => e.path), JSON.stringify(res.body)).toContain(path);
    }
  });

  it('refuses loopback, private, link-local and other internal destinations without WEBHOOK_ALLOW_PRIVATE', async () => {
    for (const url of [
      'http://127.0.0.1:8080/hook',
      'http://localhost/hook',
      'http://10.1.2.3/hook',
      'http://172.16.0.1/hook',
      'http://192.168.1.1/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://100.64.0.1/hook',
      'http://0.0.0.0/hook',
      'http://224.0.0.1/hook',
      'http://[::1]/hook',
      'http://[fd00::1]/hook',
      'http://[fe80::1]/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://[::ffff:a9fe:a9fe]/hook',
      'http://[::]/hook',
    ]) {
      const res = await alice.post('/api/v1/webhooks', { ...hook, url });
      expect(res.status, url).toBe(422);
      expect(res.body.errors, url).toEqual([{ path: '/url', message: expect.stringMatching(/internal address/) }]);
    }
    const unresolvable = await alice.post('/api/v1/webhooks', { ...hook, url: 'https://no-such-host.invalid/hook' });
    expect(unresolvable.status).toBe(422);
    expect(unresolvable.body.errors[0].message).toMatch(/does not resolve/);
  });

  it('refuses to move a webhook to an internal destination, as at registration', async () => {
    const { data } = (await alice.post('/api/v1/webhooks', hook)).body;
    for (const url of ['http://127.0.0.1:8080/hook', 'http://localhost/hook', 'http://169.254.169.254/latest/meta-data', 'http://[::ffff:10.0.0.1]/hook']) {
      const res = await alice.request('PATCH', `/api/v1/webhooks/${data.id}`, { url });
      expect(res.status, url).toBe(422);
      expect(res.body.errors, url).toEqual([{ path: '/url', message: expect.stringMatching(/internal address/) }]);
    }
    expect((await alice.get(`/api/v1/webhooks/${data.id}`)).body.data.url).toBe(hook.url);
    await alice.delete(`/api/v1/webhooks/${data.id}`);
  });

  it(`keeps at most ${MAX_WEBHOOKS_PER_USER} webhooks per user`, async () => {
    const carol = await t.user('carol', [1]);
    for (let i = 0; i < MAX_WEBHOOKS_PER_USER; i++) expect((await carol.post('/api/v1/webhooks', hook)).status).toBe(201);
    const over = await carol.post('/api/v1/webhooks', hook);
    expect(over.status).toBe(409);
    const page = await carol.get('/api/v1/webhooks?limit=5');
    expect(page.body.data).toHaveLength(5);
    const next = await carol.get(`/api/v1/webhooks?limit=20&cursor=${encodeURIComponent(page.body.next_cursor)}`);
    expect(next.body.data).toHaveLength(MAX_WEBHOOKS_PER_USER - 5);
    expect(next.body.next_cursor).toBeNull();
    // Another user's count is their own.
    expect((await bob.post('/api/v1/webhooks', hook)).status).toBe(201);
  });
});

describeEachDialect('webhooks: the OpenAPI webhooks section', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(dialect);
  });
  afterAll(() => t.close());

  it('describes each event payload and the signature headers', async () => {
    const doc = (await t.anonymous.get('/api/v1/openapi.json')).body;
    expect(Object.keys(doc.webhooks).sort()).toEqual([...WEBHOOK_EVENTS].sort());
    const started = doc.webhooks['session.started'].post;
    expect(started.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/WebhookSessionTimeEvent' });
    expect(started.parameters.map((p: { name: string }) => p.name)).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
    expect(doc.components.schemas.WebhookSessionTimeEvent.properties.data).toEqual({ $ref: '#/components/schemas/Session' });
    expect(doc.webhooks['task.deleted'].post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/WebhookTaskDeletedEvent' });
  });
});
