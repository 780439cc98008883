import { afterAll, beforeAll, expect, it } from 'vitest';
import { etagOf, noneMatch } from '../toolkit/entity-tags.js';
import { type Client, type TestApp, createTestApp, describeEachDialect } from '../../test/helpers/harness.js';

/** Contract section 7: a strong ETag on every response carrying one session or one task; If-None-Match → 304. */

const sessionBody = { org_id: 1, name: 'Tagged', type: 'standard', duration: 50, schedule: '2026-12-01', time: '9:00 AM', is_public: true };
const STRONG = /^"[A-Za-z0-9_-]{43}"$/;

it('compares If-None-Match weakly, as RFC 9110 says', () => {
  const tag = etagOf('{"data":1}');
  expect(tag).toMatch(STRONG);
  expect(noneMatch(undefined, tag)).toBe(true);
  expect(noneMatch(tag, tag)).toBe(false);
  expect(noneMatch(`W/${tag}`, tag)).toBe(false);
  expect(noneMatch(`"other", ${tag}`, tag)).toBe(false);
  expect(noneMatch('*', tag)).toBe(false);
  expect(noneMatch('"other"', tag)).toBe(true);
});

describeEachDialect('ETag and If-None-Match', (dialect) => {
  let t: TestApp;
  let alice: Client;
  let bob: Client;
  beforeAll(async () => {
    t = await createTestApp(dialect);
    alice = await t.user('alice', [1]);
    bob = await t.user('bob', [1]);
  });
  afterAll(() => t.close());

  const conditionalGet = (client: Client, url: string, tag: string) => client.request('GET', url, undefined, { 'if-none-match': tag });

  it('tags a session on POST, GET and PUT as the hash of the body, and answers 304 with no body to a current tag', async () => {
    const created = await alice.post('/api/v1/sessions', sessionBody);
    const url = `/api/v1/sessions/${created.body.data.id}`;
    expect(created.headers.etag).toBe(etagOf(created.text));
    const read = await alice.get(url);
    expect(read.headers.etag).toMatch(STRONG);
    expect(read.headers.etag).toBe(created.headers.etag);

    const unchanged = await conditionalGet(alice, url, read.headers.etag as string);
    expect(unchanged.status).toBe(304);
    expect(unchanged.text).toBe('');
    expect(unchanged.headers.etag).toBe(read.headers.etag);
    expect((await conditionalGet(alice, url, `"stale", W/${read.headers.etag as string}`)).status).toBe(304);

    const updated = await alice.put(url, { name: 'Renamed' });
    expect(updated.headers.etag).toBe(etagOf(updated.text));
    expect(updated.headers.etag).not.toBe(read.headers.etag);
    const stale = await conditionalGet(alice, url, read.headers.etag as string);
    expect(stale.status).toBe(200);
    expect(stale.headers.etag).toBe(updated.headers.etag);
  });

  it('changes the session tag when someone joins (participants_count), and tags each caller\'s own representation', async () => {
    const id = (await alice.post('/api/v1/sessions', sessionBody)).body.data.id as number;
    const url = `/api/v1/sessions/${id}`;
    const before = (await alice.get(url)).headers.etag as string;
    const joined = await bob.post(`${url}/join`);
    expect(joined.status).toBe(200);
    // The participation body is tagged as what it is.
    expect(joined.headers.etag).toBe(etagOf(joined.text));
    const after = await conditionalGet(alice, url, before);
    expect(after.status).toBe(200);
    expect(after.body.data.participants_count).toBe(2);
    // Bob's record holds his participation, so his tag differs from Alice's.
    expect((await bob.get(url)).headers.etag).not.toBe(after.headers.etag);
  });

  it('tags a task on POST, GET and PUT, answers 304, and tags no list', async () => {
    const sessionId = (await alice.post('/api/v1/sessions', sessionBody)).body.data.id as number;
    const created = await alice.post('/api/v1/tasks', { context: 'tag me', session_id: sessionId });
    const url = `/api/v1/tasks/${created.body.data.id}`;
    expect(created.headers.etag).toBe(etagOf(created.text));
    expect((await alice.get(url)).headers.etag).toBe(created.headers.etag);
    expect((await conditionalGet(alice, url, created.headers.etag as string)).status).toBe(304);
    const updated = await alice.put(url, { is_completed: true });
    expect(updated.headers.etag).not.toBe(created.headers.etag);
    expect((await conditionalGet(alice, url, created.headers.etag as string)).status).toBe(200);
    expect((await conditionalGet(alice, url, '*')).status).toBe(304);
    expect((await alice.get('/api/v1/tasks')).headers.etag).toBeUndefined();
    expect((await alice.get('/api/v1/sessions')).headers.etag).toBeUndefined();
    // Errors carry no tag, and If-None-Match does not turn a 404 into a 304.
    const missing = await conditionalGet(alice, '/api/v1/tasks/999999', '*');
    expect(missing.status).toBe(404);
    expect(missing.headers.etag).toBeUndefined();
  });

  it('documents ETag on the responses and If-None-Match on the GETs', async () => {
    const doc = (await t.anonymous.get('/api/v1/openapi.json')).body as { paths: Record<string, Record<string, any>> };
    for (const [path, method, code] of [
      ['/api/v1/sessions', 'post', '201'],
      ['/api/v1/sessions/{id}', 'get', '200'],
      ['/api/v1/sessions/{id}', 'put', '200'],
      ['/api/v1/sessions/{id}/join', 'post', '200'],
      ['/api/v1/tasks', 'post', '201'],
      ['/api/v1/tasks/{id}', 'get', '200'],
      ['/api/v1/tasks/{id}', 'put', '200'],
    ] as const) {
      const op = doc.paths[path]?.[method];
      expect(op.responses[code].headers.ETag, `${method} ${path}`).toBeDefined();
      if (method === 'get') {
        expect(op.responses['304'], path).toBeDefined();
        expect(op.parameters.some((p: { in: string; name: string }) => p.in === 'header' && p.name === 'if-none-match'), path).toBe(true);
      }
    }
  });
});
