import { beforeAll, expect, it } from 'vitest';
import { MAX_REMOVED_OCCURRENCES } from '../../src/features/sessions/sessions.schema.js';
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
    expect(full.body.meta).toEqual({ created: 1000, updated: 0, unchanged: 0 });
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
    for (const [url, max] of [['/api/v1/tasks', 1000], ['/api/v1/sessions', 500]] as const) {
      expectProblem(await t.alice.get(`${url}?limit=${max + 1}`), 422, '/limit');
      expectProblem(await t.alice.get(`${url}?limit=0`), 422, '/limit');
      expect((await t.alice.get(`${url}?limit=${max}`)).status).toBe(200);
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

  it('refuses a lone UTF-16 surrogate in any text with 422, and keeps well-formed pairs intact', async () => {
    expectProblem(await t.alice.post('/api/v1/sessions', session({ name: 'a\ud800b' })), 422, '/name');
    expectProblem(await t.alice.post('/api/v1/sessions', session({ name: 'end\udfff' })), 422, '/name');
    expectProblem(await t.alice.post('/api/v1/sessions', session({ snooze_apps: { ['\udc00app']: true } })), 422, '/snooze_apps/\udc00app');
    expectProblem(await t.alice.post('/api/v1/tasks', { session_id: sessionId, context: 'x\ud83d' }), 422, '/context');
    const bulk = await t.alice.post('/api/v1/tasks/bulk', { session_id: sessionId, tasks: [{ context: 'ok', source: '\ud800', source_id: 1 }] });
    expectProblem(bulk, 422, '/tasks/0/source');
    expectProblem(await t.alice.request('PUT', `/api/v1/sessions/${sessionId}`, '{"name":"\\ud800"}'), 422, '/name');
    // The JSON escape of an emoji's two halves, in order, is one well-formed character.
    const emoji = await t.alice.request('POST', '/api/v1/tasks', `{"session_id":${sessionId},"context":"focus \\ud83d\\ude00"}`);
    expect(emoji.status, emoji.text).toBe(201);
    expect((await t.alice.get(`/api/v1/tasks/${(emoji.body as { data: { id: string } }).data.id}`)).body.data.context).toBe('focus \u{1F600}');
  });

  it('lists at most 100 errors, the first in document order, and gives the total in detail', async () => {
    const tasks = Array.from({ length: 1000 }, (_, i) => ({ context: '', source: 'x', source_id: i, ...(i === 0 ? { colour: 'red' } : {}) }));
    const res = await t.alice.post<{ detail: string; errors: { path: string }[] }>('/api/v1/tasks/bulk', { session_id: sessionId, tasks });
    expectProblem(res, 422);
    expect(res.body.errors).toHaveLength(100);
    expect(res.body.detail).toBe('The request breaks 1001 field rules. The first 100 are listed.');
    expect(res.body.errors.slice(0, 3).map((e) => e.path)).toEqual(['/tasks/0/context', '/tasks/0/colour', '/tasks/1/context']);
    expect(res.body.errors.at(-1)?.path).toBe('/tasks/98/context');
  });

  it('reports an array or map over its limit as one error, without validating its items', async () => {
    const started = Date.now();
    const huge = await t.alice.request('POST', '/api/v1/tasks/bulk', `{"session_id":${sessionId},"tasks":[${Array(340_000).fill('{}').join(',')}]}`);
    expect(Date.now() - started).toBeLessThan(5_000);
    expectProblem(huge, 422);
    expect(huge.body).toMatchObject({ detail: 'The request breaks a field rule.', errors: [{ path: '/tasks', message: 'must NOT have more than 1000 items (has 340000)' }] });
    expect(huge.text.length).toBeLessThan(1_000);

    const oversized = await t.alice.post<{ errors: { path: string }[] }>('/api/v1/sessions', session({
      collaborator: Array(50_000).fill('NOT A HANDLE'),
      website_blocker: { mode: 'custom', category: Array(5_000).fill(''), urls: Array(20_000).fill('%%') },
      snooze_apps: Object.fromEntries(Array.from({ length: 5_000 }, (_, i) => [`app${i}`, 'yes'])),
      recurring_days: Array(50_000).fill(9),
    }));
    expectProblem(oversized, 422);
    expect(oversized.body.errors.map((e) => e.path)).toEqual([
      '/collaborator', '/website_blocker/category', '/website_blocker/urls', '/snooze_apps', '/recurring_days',
    ]);
    // A closed object with more fields than it knows is one error too, not one per unknown field.
    const flood = await t.alice.post('/api/v1/tasks', Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}`, i])));
    expectProblem(flood, 422);
    expect(flood.body.errors).toEqual([{ path: '/', message: expect.stringMatching(/^has 50000 fields; only \d+ are known$/) }]);
  });

  it('bounds what one session weighs: website_blocker 12 KiB and snooze_apps 4 KiB of JSON', async () => {
    // 500 host names of the contract fit; the same 500 as long URLs do not.
    const hosts = Array.from({ length: 500 }, (_, i) => `site${i}.example`);
    expect((await t.alice.post('/api/v1/sessions', session({ website_blocker: { mode: 'custom', urls: hosts } }))).status).toBe(201);
    const long = hosts.map((h) => `https://${h}/${'p'.repeat(30)}`);
    const tooBig = await t.alice.post('/api/v1/sessions', session({ website_blocker: { mode: 'custom', urls: long } }));
    expectProblem(tooBig, 422, '/website_blocker');
    expect(tooBig.body.errors[0].message).toMatch(/^takes \d+ bytes as JSON; at most 12288$/);
    const apps = (length: number) => Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`${i}`.padEnd(length, 'a'), true]));
    expect((await t.alice.post('/api/v1/sessions', session({ snooze_apps: apps(60) }))).status).toBe(201);
    expectProblem(await t.alice.post('/api/v1/sessions', session({ snooze_apps: apps(90) })), 422, '/snooze_apps');
    // An update is checked on the merged session too.
    expectProblem(await t.alice.put(`/api/v1/sessions/${sessionId}`, { snooze_apps: apps(90) }), 422, '/snooze_apps');
  });

  it(`removes at most ${MAX_REMOVED_OCCURRENCES} occurrences from one series, then answers 409`, async () => {
    const series = await t.alice.post<{ data: { id: number } }>('/api/v1/sessions', session({ is_recurring: 1, occurrence: 'daily', schedule: '2030-01-01' }));
    const id = series.body.data.id;
    const dayOf = (day: number) => new Date(Date.UTC(2030, 0, 1 + day)).toISOString().slice(0, 10);
    // All but the last through the database, the last through the API (which rewrites rrule);
    // the first occurrence stays, so that rrule's DTSTART stays before them all.
    const stored = Array.from({ length: MAX_REMOVED_OCCURRENCES - 1 }, (_, day) => ({ session_id: id, occurrence_date: dayOf(day + 1) }));
    for (let i = 0; i < stored.length; i += 200) await t.storage.db.insertInto('session_exceptions').values(stored.slice(i, i + 200)).execute();
    expect((await t.alice.delete(`/api/v1/sessions/${id}?scope=occurrence&date=${dayOf(MAX_REMOVED_OCCURRENCES)}`)).status).toBe(204);
    const refused = await t.alice.delete(`/api/v1/sessions/${id}?scope=occurrence&date=2033-01-01`);
    expectProblem(refused, 409);
    expect(refused.body.detail).toContain(`${MAX_REMOVED_OCCURRENCES} removed occurrences`);
    const rrule = (await t.alice.get<{ data: { rrule: string } }>(`/api/v1/sessions/${id}`)).body.data.rrule;
    expect(rrule.split('\n')[2]?.split(',')).toHaveLength(MAX_REMOVED_OCCURRENCES);
    // Ending the series is still possible.
    expect((await t.alice.delete(`/api/v1/sessions/${id}?scope=following&date=2033-01-01`)).status).toBe(204);
  }, 60_000);

  it('answers a wrong method on a known path with 405 and Allow', async () => {
    const cases: [string, string, string][] = [
      ['PATCH', `/api/v1/tasks/1`, 'DELETE, GET, PUT'],
      ['DELETE', '/api/v1/tasks', 'GET, POST'],
      ['DELETE', '/api/v1/sessions', 'GET, POST'],
      ['POST', '/api/v1/me', 'GET, PUT'],
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
