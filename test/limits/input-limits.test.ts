import { beforeAll, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../src/toolkit/json-depth.js';
import { type Response, describeEachDialect, useTestApp } from '../helpers/harness.js';

/** Every limit answers a 4xx problem+json, never a 500 or a hang. */
function expectProblem(res: Response, status: number, path?: string) {
  expect(res.status, res.text.slice(0, 300)).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
  if (path !== undefined) expect((res.body as { errors: { path: string }[] }).errors.map((e) => e.path)).toContain(path);
}

const session = (over: Record<string, unknown> = {}) => ({
  org_id: 1,
  name: 'Deep work',
  type: 'standard',
  duration: 50,
  schedule: '2026-12-01',
  time: '9:00 AM',
  ...over,
});

describeEachDialect('input limits', (dialect) => {
  const t = useTestApp(dialect, { alice: [1] });
  let sessionId: number;
  beforeAll(async () => {
    sessionId = (await t.alice.post<{ data: { id: number } }>('/api/v1/sessions', session())).body.data.id;
  });

  it('refuses a body over 1 MiB with 413', async () => {
    const body = JSON.stringify({ session_id: sessionId, context: 'x'.repeat(1024 * 1024) });
    expectProblem(await t.alice.request('POST', '/api/v1/tasks', body), 413);
    // Just under the limit is read, then judged by the field rules.
    const under = JSON.stringify({ session_id: sessionId, context: 'x'.repeat(1024 * 1024 - 100) });
    expectProblem(await t.alice.request('POST', '/api/v1/tasks', under), 422, '/context');
  });

  it(`refuses JSON nested deeper than ${MAX_JSON_DEPTH} levels with 400, before parsing`, async () => {
    const nest = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
    // The body object is level 1; an echoed read-only field may nest up to the limit.
    const ok = await t.alice.request('POST', '/api/v1/tasks', `{"context":"a","session_id":${sessionId},"id":${nest(MAX_JSON_DEPTH - 1)}}`);
    expect(ok.status).toBe(201);
    expectProblem(await t.alice.request('POST', '/api/v1/tasks', `{"context":"a","session_id":${sessionId},"id":${nest(MAX_JSON_DEPTH)}}`), 400);
    // Half a million levels: answered quickly, not a stack overflow.
    const started = Date.now();
    expectProblem(await t.alice.request('POST', '/api/v1/tasks', `{"id":${'{"a":'.repeat(150_000)}1${'}'.repeat(150_000)}}`), 400);
    expectProblem(await t.alice.request('POST', '/api/v1/tasks', nest(500_000)), 400);
    expect(Date.now() - started).toBeLessThan(5_000);
    // Brackets inside strings are text, not nesting.
    expect((await t.alice.request('POST', '/api/v1/tasks', { context: '['.repeat(1500), session_id: sessionId })).status).toBe(201);
  });

  it('bounds string lengths', async () => {
    expectProblem(await t.alice.post('/api/v1/tasks', { session_id: sessionId, context: 'x'.repeat(2001) }), 422, '/context');
    expect((await t.alice.post('/api/v1/tasks', { session_id: sessionId, context: 'x'.repeat(2000) })).status).toBe(201);
    expectProblem(await t.alice.post('/api/v1/sessions', session({ name: 'n'.repeat(201) })), 422, '/name');
    expectProblem(await t.alice.post('/api/v1/sessions', session({ timezone: 'Z'.repeat(65) })), 422, '/timezone');
    expectProblem(await t.alice.post('/api/v1/tasks', { session_id: sessionId, context: 'a', source: 's'.repeat(65), source_id: 1 }), 422, '/source');
    expectProblem(await t.alice.get(`/api/v1/sessions?keyword=${'k'.repeat(201)}`), 422, '/keyword');
    expectProblem(await t.alice.get(`/api/v1/tasks?cursor=${'c'.repeat(513)}`), 422, '/cursor');
    expectProblem(await t.alice.post('/api/v1/sessions', session({ website_blocker: { mode: 'custom', category: [], urls: [`${'a'.repeat(2049)}.com`] } })), 422);
  });

  it('bounds array and map sizes', async () => {
    const items = (n: number) => Array.from({ length: n }, (_, i) => ({ context: `t${i}`, source: 'todoist', source_id: i }));
    expectProblem(await t.alice.post('/api/v1/tasks/bulk', { session_id: sessionId, tasks: items(1001) }), 422, '/tasks');
    const full = await t.alice.post<{ meta: unknown }>('/api/v1/tasks/bulk', { session_id: sessionId, tasks: items(1000) });
    expect(full.status).toBe(200);
    expect(full.body.meta).toEqual({ created: 1000, updated: 0 });
    expectProblem(await t.alice.post('/api/v1/tasks/bulk', { session_id: sessionId, tasks: [] }), 422, '/tasks');

    const handles = Array.from({ length: 101 }, (_, i) => `user${i}`);
    expectProblem(await t.alice.post('/api/v1/sessions', session({ collaborator: handles })), 422, '/collaborator');
    const urls = (n: number) => Array.from({ length: n }, (_, i) => `site${i}.example`);
    expectProblem(await t.alice.post('/api/v1/sessions', session({ website_blocker: { mode: 'custom', category: [], urls: urls(501) } })), 422, '/website_blocker/urls');
    expect((await t.alice.post('/api/v1/sessions', session({ website_blocker: { mode: 'custom', category: [], urls: urls(500) } }))).status).toBe(201);
    const apps = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`app${i}`, true]));
    expectProblem(await t.alice.post('/api/v1/sessions', session({ snooze_apps: apps(51) })), 422, '/snooze_apps');
    expect((await t.alice.post('/api/v1/sessions', session({ snooze_apps: apps(50) }))).status).toBe(201);
  });

  it('bounds page sizes and date ranges', async () => {
    for (const url of ['/api/v1/tasks', '/api/v1/sessions']) {
      expectProblem(await t.alice.get(`${url}?limit=501`), 422, '/limit');
      expectProblem(await t.alice.get(`${url}?limit=0`), 422, '/limit');
      expect((await t.alice.get(`${url}?limit=500`)).status).toBe(200);
    }
    const page = await t.alice.get<{ data: unknown[]; next_cursor: unknown }>('/api/v1/tasks?limit=500');
    expect(page.body.data).toHaveLength(500);
    expect(page.body.next_cursor).toEqual(expect.any(String));

    expectProblem(await t.alice.get('/api/v1/sessions?day_start=2026-01-01&day_ends=2027-01-02'), 422, '/day_ends');
    expect((await t.alice.get('/api/v1/sessions?day_start=2026-01-01&day_ends=2027-01-01')).status).toBe(200);
    expectProblem(await t.alice.get(`/api/v1/sessions/${sessionId}/occurrences?from=2026-01-01&to=2027-01-02`), 422, '/to');
    expect((await t.alice.get(`/api/v1/sessions/${sessionId}/occurrences?from=2026-01-01&to=2027-01-01`)).status).toBe(200);
  });

  it('refuses U+0000 in any text with 422 naming the field, the same on every dialect', async () => {
    expectProblem(await t.alice.post('/api/v1/sessions', session({ name: 'a\u0000b' })), 422, '/name');
    expectProblem(await t.alice.post('/api/v1/sessions', session({ snooze_apps: { 'app\u0000': true } })), 422, '/snooze_apps/app\u0000');
    expectProblem(await t.alice.post('/api/v1/tasks', { session_id: sessionId, context: '\u0000' }), 422, '/context');
    const bulk = await t.alice.post('/api/v1/tasks/bulk', { session_id: sessionId, tasks: [{ context: 'ok', source: 'x\u0000', source_id: 1 }] });
    expectProblem(bulk, 422, '/tasks/0/source');
    expectProblem(await t.alice.get('/api/v1/sessions?keyword=a%00b'), 422, '/keyword');
    // A forged cursor smuggling U+0000 is not one we issued.
    const forged = Buffer.from(JSON.stringify(['2026-01-01T00:00:00.000Z\u0000', 1])).toString('base64url');
    expectProblem(await t.alice.get(`/api/v1/sessions?cursor=${forged}`), 422, '/cursor');
  });

  it('answers a wrong method on a known path with 405 and Allow', async () => {
    const cases: [string, string, string][] = [
      ['PATCH', `/api/v1/tasks/1`, 'DELETE, GET, PUT'],
      ['DELETE', '/api/v1/tasks', 'GET, POST'],
      ['DELETE', '/api/v1/sessions', 'GET, POST'],
      ['POST', '/api/v1/me', 'GET'],
      ['GET', `/api/v1/sessions/${sessionId}/join`, 'POST'],
      ['POST', '/healthz', 'GET'],
    ];
    for (const [method, url, allow] of cases) {
      const res = await t.alice.request(method, url);
      expectProblem(res, 405);
      expect(res.headers.allow, `${method} ${url}`).toBe(allow);
    }
    expectProblem(await t.alice.request('GET', '/api/v1/nothing-here'), 404);
  });

  it('treats ids that cannot exist as 404, never 500', async () => {
    for (const id of ['0', '-1', '1.5', 'abc', '9007199254740992', '99999999999999999999999', '%00', 'x'.repeat(300)]) {
      expectProblem(await t.alice.get(`/api/v1/tasks/${id}`), 404);
      expectProblem(await t.alice.delete(`/api/v1/sessions/${id}`), 404);
    }
  });
});
