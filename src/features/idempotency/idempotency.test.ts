import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../app/app.js';
import { type Client, type Response, type TestApp, createTestApp, describeEachDialect, testConfig } from '../../../test/helpers/harness.js';
import { parseIdempotencyKey, requestFingerprint } from './idempotency.key.js';
import { CLAIM_LEASE_MS } from './idempotency.plugin.js';
import { createIdempotencyRepository } from './idempotency.repository.js';

const sessionBody = { org_id: 1, name: 'Deep work', type: 'standard', duration: 50, schedule: '2026-03-10', time: '9:00 AM', is_public: true };
let keys = 0;
const newKey = () => `key-${Date.now()}-${keys++}`;

describe('Idempotency-Key header', () => {
  it('names the same key bare or as a structured-field string', () => {
    expect(parseIdempotencyKey('abc-123')).toBe('abc-123');
    expect(parseIdempotencyKey('"abc-123"')).toBe('abc-123');
    expect(parseIdempotencyKey('"with \\"quotes\\" and \\\\"')).toBe('with "quotes" and \\');
    expect(parseIdempotencyKey('has spaces inside')).toBe('has spaces inside');
    expect(parseIdempotencyKey('x'.repeat(255))).toBe('x'.repeat(255));
    expect(parseIdempotencyKey(`"${'x'.repeat(255)}"`)).toBe('x'.repeat(255));
  });

  it('refuses empty, over 255, non-ASCII, control characters and broken quoting', () => {
    for (const bad of ['', '""', 'x'.repeat(256), 'clé', 'tab\there', '"unterminated', '"bad \\x escape"', '"inner " quote"']) {
      expect(parseIdempotencyKey(bad), JSON.stringify(bad)).toBeUndefined();
    }
  });

  it('fingerprints method, URL and body, ignoring key order', () => {
    const a = requestFingerprint('POST', '/api/v1/tasks', { a: 1, b: [1, { c: 2, d: 3 }] });
    expect(requestFingerprint('POST', '/api/v1/tasks', { b: [1, { d: 3, c: 2 }], a: 1 })).toBe(a);
    expect(requestFingerprint('POST', '/api/v1/tasks', { a: 1, b: [{ c: 2, d: 3 }, 1] })).not.toBe(a);
    expect(requestFingerprint('POST', '/api/v1/tasks?x=1', { a: 1, b: [1, { c: 2, d: 3 }] })).not.toBe(a);
  });
});

describeEachDialect('Idempotency-Key on every POST', (dialect) => {
  let t: TestApp;
  let alice: Client;
  let bob: Client;
  let sessionId: number;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    alice = await t.user('alice', [1]);
    bob = await t.user('bob', [1]);
    sessionId = (await alice.post<{ data: { id: number } }>('/api/v1/sessions', sessionBody)).body.data.id;
  });
  afterAll(() => t.close());

  const post = (client: Client, url: string, body: unknown, key: string) => client.request('POST', url, body === undefined ? '' : JSON.stringify(body), { 'idempotency-key': key });
  const count = async (table: 'sessions' | 'tasks') =>
    Number((await t.storage.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

  function expectReplay(first: Response, again: Response) {
    expect(again.status).toBe(first.status);
    expect(again.text).toBe(first.text);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers.location).toBe(first.headers.location);
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
  }

  it('replays the first response of POST /sessions to a retry, bare or quoted, and creates one session', async () => {
    const key = newKey();
    const before = await count('sessions');
    const first = await post(alice, '/api/v1/sessions', sessionBody, key);
    expect(first.status, first.text).toBe(201);
    expect(first.headers.location).toMatch(/^\/api\/v1\/sessions\/\d+$/);
    // The same body with its keys in another order, and the key as a structured-field string.
    const reordered = Object.fromEntries(Object.entries(sessionBody).reverse());
    expectReplay(first, await post(alice, '/api/v1/sessions', reordered, `"${key}"`));
    expectReplay(first, await post(alice, '/api/v1/sessions', sessionBody, key));
    expect(await count('sessions')).toBe(before + 1);
  });

  it('replays POST /tasks and /tasks/bulk without writing again', async () => {
    const key = newKey();
    const tasksBefore = await count('tasks');
    const first = await post(alice, '/api/v1/tasks', { context: 'once', session_id: sessionId }, key);
    expect(first.status, first.text).toBe(201);
    expectReplay(first, await post(alice, '/api/v1/tasks', { context: 'once', session_id: sessionId }, key));
    expect(await count('tasks')).toBe(tasksBefore + 1);

    const bulkKey = newKey();
    const bulk = { session_id: sessionId, tasks: [{ context: 'imported', source: 'linear', source_id: 1 }] };
    const imported = await post(alice, '/api/v1/tasks/bulk', bulk, bulkKey);
    expect(imported.body.meta).toEqual({ created: 1, updated: 0, unchanged: 0 });
    // Someone changes the task meanwhile; the replay must not import over it.
    const id = imported.body.data[0].id as string;
    expect((await alice.put(`/api/v1/tasks/${id}`, { context: 'edited since' })).status).toBe(200);
    expectReplay(imported, await post(alice, '/api/v1/tasks/bulk', bulk, bulkKey));
    expect((await alice.get(`/api/v1/tasks/${id}`)).body.data.context).toBe('edited since');
  });

  it('replays join, leave and complete: a replayed join after leaving does not join again', async () => {
    const key = newKey();
    const joined = await post(bob, `/api/v1/sessions/${sessionId}/join`, undefined, key);
    expect(joined.status, joined.text).toBe(200);
    expect((await bob.post(`/api/v1/sessions/${sessionId}/leave`)).status).toBe(200);
    // A bodiless endpoint: an empty body and `{}` are the same request.
    const again = await bob.request('POST', `/api/v1/sessions/${sessionId}/join`, {}, { 'idempotency-key': key });
    expectReplay(joined, again);
    expect((await bob.get(`/api/v1/sessions/${sessionId}`)).body.data.participation.joined).toBe(false);

    const joinKey = newKey();
    expect((await post(bob, `/api/v1/sessions/${sessionId}/join`, undefined, joinKey)).status).toBe(200);
    const completeKey = newKey();
    const completed = await post(bob, `/api/v1/sessions/${sessionId}/complete`, undefined, completeKey);
    expect(completed.status).toBe(200);
    expectReplay(completed, await post(bob, `/api/v1/sessions/${sessionId}/complete`, undefined, completeKey));
    const leaveKey = newKey();
    const refused = await post(bob, `/api/v1/sessions/${sessionId}/leave`, undefined, leaveKey);
    expect(refused.status).toBe(409);
    // A 4xx is a completed response too: replayed as it was.
    expectReplay(refused, await post(bob, `/api/v1/sessions/${sessionId}/leave`, undefined, leaveKey));
  });

  it('answers 422 idempotency-key-reused for the same key with another body or endpoint', async () => {
    const key = newKey();
    expect((await post(alice, '/api/v1/tasks', { context: 'first', session_id: sessionId }, key)).status).toBe(201);
    for (const [url, body] of [
      ['/api/v1/tasks', { context: 'second', session_id: sessionId }],
      ['/api/v1/sessions', sessionBody],
      [`/api/v1/sessions/${sessionId}/join`, undefined],
    ] as const) {
      const res = await post(alice, url, body, key);
      expect(res.status, res.text).toBe(422);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body.type).toMatch(/^http:\/\/[^/]+\/problems\/idempotency-key-reused$/);
    }
  });

  it('keeps keys per user: another user with the same key runs their own request', async () => {
    const key = newKey();
    const mine = await post(alice, '/api/v1/tasks', { context: 'mine', session_id: sessionId }, key);
    const theirs = await post(bob, '/api/v1/tasks', { context: 'mine', session_id: sessionId }, key);
    expect(theirs.status).toBe(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.body.data.id).not.toBe(mine.body.data.id);
  });

  it('keeps nothing for a request its schema refused, so the fixed request runs under the same key', async () => {
    const key = newKey();
    const bad = await post(alice, '/api/v1/sessions', { ...sessionBody, duration: 0 }, key);
    expect(bad.status).toBe(422);
    expect((await post(alice, '/api/v1/tasks', { context: '' , session_id: sessionId }, key)).status).toBe(422);
    const fixed = await post(alice, '/api/v1/sessions', sessionBody, key);
    expect(fixed.status, fixed.text).toBe(201);
    expect(fixed.headers['idempotent-replayed']).toBeUndefined();
  });

  it('answers 400 for a malformed key, and nothing is written', async () => {
    const before = await count('tasks');
    for (const bad of ['x'.repeat(256), 'x'.repeat(2000), '"open', 'caf\u00e9']) {
      const res = await alice.request('POST', '/api/v1/tasks', JSON.stringify({ context: 'never', session_id: sessionId }), { 'idempotency-key': bad });
      expect(res.status, res.text).toBe(400);
      expect(res.body.detail).toMatch(/Idempotency-Key/);
    }
    expect(await count('tasks')).toBe(before);
  });

  it('answers 409 while the first request is still running, and takes over a claim abandoned past its lease', async () => {
    const key = newKey();
    const body = { context: 'in flight', session_id: sessionId };
    const fingerprint = requestFingerprint('POST', '/api/v1/tasks', body);
    const aliceId = (await t.storage.db.selectFrom('users').select('id').where('handle', '=', 'alice').executeTakeFirstOrThrow()).id;
    const claimedAt = new Date().toISOString();
    // Another instance claimed the key a moment ago and is still working.
    await createIdempotencyRepository(t.storage).insertClaim({ userId: aliceId, key, fingerprint, claimedAt, expiresAt: new Date(Date.now() + 86_400_000).toISOString() });
    const busy = await post(alice, '/api/v1/tasks', body, key);
    expect(busy.status, busy.text).toBe(409);
    expect(busy.headers['retry-after']).toBe('1');
    expect(busy.body.type).toMatch(/^http:\/\/[^/]+\/problems\/idempotency-key-in-flight$/);
    // That instance died: past the lease the key is free again.
    await t.storage.db
      .updateTable('idempotency_keys')
      .set({ claimed_at: new Date(Date.now() - CLAIM_LEASE_MS - 1_000).toISOString() })
      .where('key', '=', key)
      .execute();
    const ran = await post(alice, '/api/v1/tasks', body, key);
    expect(ran.status, ran.text).toBe(201);
    expectReplay(ran, await post(alice, '/api/v1/tasks', body, key));
  });

  it('runs exactly one of many concurrent identical requests; the others are 409 or replays', async () => {
    const key = newKey();
    const before = await count('tasks');
    const answers = await Promise.all(Array.from({ length: 12 }, () => post(alice, '/api/v1/tasks', { context: 'raced', session_id: sessionId }, key)));
    expect(await count('tasks')).toBe(before + 1);
    const created = answers.filter((a) => a.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(answers.every((a) => a.status === 201 || a.status === 409)).toBe(true);
    expect(new Set(created.map((a) => a.text)).size).toBe(1);
    expect(created.filter((a) => a.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
  });

  it('replays across instances sharing the database', async () => {
    const other = await buildApp({ config: testConfig(t.url), logger: false });
    try {
      const key = newKey();
      const first = await post(alice, '/api/v1/sessions', { ...sessionBody, name: 'Across' }, key);
      const res = await other.inject({
        method: 'POST',
        url: '/api/v1/sessions',
        headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json', 'idempotency-key': key },
        payload: JSON.stringify({ ...sessionBody, name: 'Across' }),
      });
      expect(res.statusCode).toBe(201);
      expect(res.body).toBe(first.text);
      expect(res.headers['idempotent-replayed']).toBe('true');
    } finally {
      await other.close();
    }
  });

  it('forgets a key after 24 h: an expired one runs the request again, and the purge deletes expired keys', async () => {
    const key = newKey();
    const body = { context: 'expires', session_id: sessionId };
    const first = await post(alice, '/api/v1/tasks', body, key);
    await t.storage.db.updateTable('idempotency_keys').set({ expires_at: new Date(Date.now() - 1).toISOString() }).where('key', '=', key).execute();
    const again = await post(alice, '/api/v1/tasks', body, key);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(again.body.data.id).not.toBe(first.body.data.id);

    const past = new Date(Date.now() - 1).toISOString();
    await t.storage.db.updateTable('idempotency_keys').set({ expires_at: past }).execute();
    const total = Number((await t.storage.db.selectFrom('idempotency_keys').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
    expect(total).toBeGreaterThan(3);
    // Bounded: one purge deletes at most its batch.
    expect(await createIdempotencyRepository(t.storage).purgeExpired(new Date().toISOString(), 2)).toBe(2);
    expect(await createIdempotencyRepository(t.storage).purgeExpired(new Date().toISOString(), 10_000)).toBe(total - 2);
  });

  it('documents the header, the replay marker and the refusals on every POST', async () => {
    const doc = (await t.anonymous.get('/api/v1/openapi.json')).body as { paths: Record<string, Record<string, any>> };
    // Under the API prefix: /auth/* (sign-in, invitations) makes sessions, not records, and takes no Idempotency-Key.
    const posts = Object.entries(doc.paths).flatMap(([path, ops]) => (ops.post === undefined || !path.startsWith('/api/v1/') ? [] : [[path, ops.post]]));
    expect(posts.map(([path]) => path).sort()).toEqual([
      '/api/v1/calendar-feeds',
      '/api/v1/device/approve',
      '/api/v1/device/deny',
      '/api/v1/me/tokens',
      '/api/v1/orgs/{id}/invites',
      '/api/v1/sessions',
      '/api/v1/sessions/{id}/complete',
      '/api/v1/sessions/{id}/join',
      '/api/v1/sessions/{id}/leave',
      '/api/v1/tasks',
      '/api/v1/tasks/bulk',
      '/api/v1/webhooks',
      '/api/v1/webhooks/{id}/rotate-secret',
      '/api/v1/webhooks/{id}/test',
    ]);
    for (const [path, op] of posts) {
      expect(op.parameters.find((p: { in: string; name: string }) => p.in === 'header' && p.name === 'idempotency-key'), path).toBeDefined();
      const success = Object.entries(op.responses).find(([code]) => code.startsWith('2'))?.[1] as { headers?: Record<string, unknown> };
      expect(success.headers?.['Idempotent-Replayed'], path).toBeDefined();
      for (const code of ['400', '409', '422']) expect(op.responses[code], `${path} ${code}`).toBeDefined();
    }
  });
});
