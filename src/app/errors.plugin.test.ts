import { expect, it } from 'vitest';
import { type Response, createTestApp, describeEachDialect, useTestApp } from '../../test/helpers/harness.js';

const PROBLEM_KEYS = new Set(['type', 'title', 'status', 'detail', 'instance', 'errors']);
/** Things that must never reach a client: stack frames, SQL, driver and framework internals. */
const INTERNALS = /\bat .+[(:]\d+|node_modules|\.ts\b|\.js:\d|SQLITE|sqlite_|\bselect\b|\binsert into\b|\bupdate "|\bwhere\b|syntax error at|FST_ERR|Error:|stack/i;

/** Asserts an RFC 9457 problem with the given status, and nothing internal in it. */
function expectProblem(res: Response, status: number): Record<string, unknown> {
  expect(res.status, res.text).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
  const body = res.body as Record<string, unknown>;
  for (const key of Object.keys(body)) expect(PROBLEM_KEYS.has(key), `unexpected key ${key}`).toBe(true);
  expect(body.type).toMatch(/^https?:\/\/\S+$/);
  expect(typeof body.title).toBe('string');
  expect(body.status).toBe(status);
  expect(typeof body.detail).toBe('string');
  expect((body.detail as string).length).toBeGreaterThan(0);
  if (status === 422) expect(Array.isArray(body.errors)).toBe(true);
  else expect(body.errors).toBeUndefined();
  expect(res.text).not.toMatch(INTERNALS);
  return body;
}

describeEachDialect('the error layer over HTTP', (dialect) => {
  const t = useTestApp(dialect, { alice: [1] });

  const raw = (method: string, url: string, payload: string | Buffer | undefined, headers: Record<string, string>) =>
    t.app
      .inject({ method: method as 'POST', url, payload, headers: { authorization: `Bearer ${t.alice.token}`, ...headers } })
      .then((r): Response => {
        let body: unknown;
        try {
          body = JSON.parse(r.body);
        } catch {
          body = undefined;
        }
        return { status: r.statusCode, headers: r.headers, body, text: r.body };
      });

  it('a query parameter a route does not take is 422 and changes nothing', async () => {
    const s = (await t.alice.post('/api/v1/sessions', { org_id: 1, name: 'strict', type: 'standard', duration: 30, schedule: '2027-03-01', time: '9:00 AM', is_recurring: 1, occurrence: 'daily' })).body.data;
    const task = (await t.alice.post('/api/v1/tasks', { context: 'strict', session_id: s.id })).body.data;
    const put = expectProblem(await t.alice.request('PUT', `/api/v1/tasks/${task.id}?scope=occurrence&date=2027-03-02`, { context: 'changed' }), 422);
    expect((put.errors as { path: string }[]).map((e) => e.path).sort()).toEqual(['/date', '/scope']);
    expect((await t.alice.get(`/api/v1/tasks/${task.id}`)).body.data.context).toBe('strict');
    // A session's PUT takes `date` and `scope` (contract section 10) but nothing else.
    expectProblem(await t.alice.request('PUT', `/api/v1/sessions/${s.id}?foo=1`, { duration: 45 }), 422);
    expect((await t.alice.get(`/api/v1/sessions/${s.id}`)).body.data.duration).toBe(30);
    expectProblem(await t.alice.request('POST', '/api/v1/tasks?foo=1', { context: 'x' }), 422);
    expect((await t.alice.get('/api/v1/tasks')).body.data).toHaveLength(1);
    for (const url of ['/api/v1/me?foo=1', '/api/v1/me/now?foo=bar', '/api/v1/calendar-feeds?limit=abc', `/api/v1/tasks/1?x=`]) {
      expectProblem(await t.alice.get(url), 422);
    }
    // Routes that take a query string still take theirs.
    expect((await t.alice.get(`/api/v1/sessions/${s.id}?date=2027-03-02`)).status).toBe(200);
    // The OpenAPI document says so.
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(Object.keys(doc.paths['/api/v1/me/now'].get.responses)).toContain('422');
  });

  it('a body that is not UTF-8 is 400, one declared in another charset 415, and nothing is stored', async () => {
    const invalid = Buffer.concat([Buffer.from('{"context":"a'), Buffer.from([0xff, 0xfe]), Buffer.from('","session_id":1}')]);
    expectProblem(await raw('POST', '/api/v1/tasks', invalid, { 'content-type': 'application/json' }), 400);
    expectProblem(await raw('POST', '/api/v1/calendar-feeds', Buffer.from('{"name":"caf\xe9"}', 'latin1'), { 'content-type': 'application/json; charset=iso-8859-1' }), 415);
    expect((await t.alice.get('/api/v1/calendar-feeds')).body.data).toEqual([]);
    // UTF-8 declared or not is read as such.
    const ok = await raw('POST', '/api/v1/calendar-feeds', Buffer.from('{"name":"Ärger"}'), { 'content-type': 'application/json; charset=UTF-8' });
    expect(ok.status, ok.text).toBe(201);
    expect((ok.body as { data: { name: string } }).data.name).toBe('Ärger');
  });

  it('a query string that is not validly percent-encoded is 400', async () => {
    for (const query of ['keyword=%ZZ', 'keyword=%ff', 'keyword=%', 'keyword=%E0%A4%A']) {
      expectProblem(await t.alice.get(`/api/v1/sessions?${query}`), 400);
    }
    expect((await t.alice.get('/api/v1/sessions?keyword=%C3%84rger')).status).toBe(200);
  });

  it('malformed JSON is 400', async () => {
    for (const body of ['{bad', '{"context": "x",}', '[1,', 'nul', '{"a":1}{', "{'a':1}", '\u0000']) {
      for (const url of ['/api/v1/tasks', '/api/v1/tasks/bulk', '/api/v1/sessions']) {
        expectProblem(await t.alice.request('POST', url, body), 400);
      }
      expectProblem(await t.alice.request('PUT', '/api/v1/tasks/1', body), 400);
    }
  });

  it('an empty JSON body is 400; a JSON body poisoning the prototype is 400', async () => {
    expectProblem(await raw('POST', '/api/v1/tasks', '', { 'content-type': 'application/json' }), 400);
    expectProblem(await t.alice.request('POST', '/api/v1/tasks', '{"__proto__": {"admin": true}, "context": "x", "session_id": 1}'), 400);
    expectProblem(
      await t.alice.request('POST', '/api/v1/tasks', '{"constructor": {"prototype": {"admin": true}}, "context": "x", "session_id": 1}'),
      400,
    );
  });

  it('a body shorter than its Content-Length is 400', async () => {
    const body = expectProblem(
      await raw('POST', '/api/v1/tasks', '{"context":"x"}', { 'content-type': 'application/json', 'content-length': '40' }),
      400,
    );
    expect(body.detail).toMatch(/Content-Length/);
  });

  it('a body that is not JSON is 415', async () => {
    const cases: [string, string][] = [
      ['text/plain', 'context=x'],
      ['text/plain; charset=utf-8', '{"context":"x","session_id":1}'],
      ['application/x-www-form-urlencoded', 'context=x&session_id=1'],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="context"\r\n\r\nx\r\n--x--'],
      ['application/xml', '<task/>'],
      ['application/problem+json', '{}'],
    ];
    for (const [type, body] of cases) {
      for (const url of ['/api/v1/tasks', '/api/v1/tasks/bulk', '/api/v1/sessions']) {
        const res = await raw('POST', url, body, { 'content-type': type });
        expectProblem(res, 415);
      }
      expectProblem(await raw('PUT', '/api/v1/tasks/1', body, { 'content-type': type }), 415);
    }
    // A body with no content type at all.
    expectProblem(await raw('POST', '/api/v1/tasks', '{"context":"x","session_id":1}', {}), 415);
  });

  it('a body over 1 MiB is 413; one just under it is read', async () => {
    const MiB = 1024 * 1024;
    const wrap = (n: number) => {
      const head = '{"session_id":1,"context":"';
      const tail = '"}';
      return head + 'x'.repeat(n - head.length - tail.length) + tail;
    };
    expectProblem(await t.alice.request('POST', '/api/v1/tasks', wrap(MiB + 1)), 413);
    expectProblem(await t.alice.request('POST', '/api/v1/tasks/bulk', wrap(5 * MiB)), 413);
    // Exactly at the limit the body is parsed, so the answer is about its fields.
    const atLimit = expectProblem(await t.alice.request('POST', '/api/v1/tasks', wrap(MiB)), 422);
    expect((atLimit.errors as { path: string }[]).map((e) => e.path)).toContain('/context');
  });

  it('unknown routes are 404', async () => {
    for (const url of ['/api/v1/nope', '/api/v1/tasks/1/children', '/api/v2/tasks', '/nope', '/api/v1', '/api/v1/task']) {
      expectProblem(await t.alice.get(url), 404);
      expectProblem(await t.anonymous.get(url), 404);
    }
  });

  it('a wrong method on a known path is 405 with Allow', async () => {
    const cases: [string, string, string][] = [
      ['DELETE', '/api/v1/tasks', 'GET, POST'],
      ['PUT', '/api/v1/tasks', 'GET, POST'],
      ['PATCH', '/api/v1/tasks/1', 'DELETE, GET, PUT'],
      ['POST', '/api/v1/tasks/1', 'DELETE, GET, PUT'],
      ['POST', '/api/v1/me', 'GET, PUT'],
      ['DELETE', '/api/v1/me', 'GET, PUT'],
      ['PATCH', '/api/v1/sessions/1', 'DELETE, GET, PUT'],
      ['DELETE', '/api/v1/tasks/', 'GET, POST'],
      // The path of POST /tasks/bulk, though GET /tasks/{id} matches it with an id that cannot exist.
      ['GET', '/api/v1/tasks/bulk', 'POST'],
      ['DELETE', '/api/v1/tasks/bulk', 'POST'],
      ['PUT', '/api/v1/tasks/bulk/', 'POST'],
    ];
    for (const [method, url, allow] of cases) {
      const res = await t.alice.request(method, url, method === 'DELETE' ? undefined : {});
      expectProblem(res, 405);
      expect(res.headers.allow, `${method} ${url}`).toBe(allow);
    }
  });

  it('path ids that are not positive integers are 404 (or 400), never 500', async () => {
    const ids = ['abc', '0', '-1', '1.5', '1e3', '0x1', '99999999999999999999', '9'.repeat(250), '%zz', '%00', '1%2F2', ' 1'];
    for (const id of ids) {
      for (const url of [`/api/v1/tasks/${id}`, `/api/v1/sessions/${id}`]) {
        for (const method of ['GET', 'PUT', 'DELETE']) {
          const res = await t.alice.request(method, url, method === 'PUT' ? { context: 'x' } : undefined);
          expect([400, 404], `${method} ${url}: ${res.status}`).toContain(res.status);
          expectProblem(res, res.status);
        }
      }
    }
  });

  it('field errors are 422 and list every bad field', async () => {
    const body = expectProblem(await t.alice.post('/api/v1/tasks', { context: '', session_id: 'x', nope: 1 }), 422);
    expect((body.errors as { path: string; message: string }[]).map((e) => e.path).sort()).toEqual(['/context', '/nope', '/session_id']);
    for (const e of body.errors as { path: string; message: string }[]) {
      expect(Object.keys(e).sort()).toEqual(['message', 'path']);
      expect(e.message.length).toBeGreaterThan(0);
    }
    // A pattern-checked field explains itself in words, not with the regex.
    const ws = expectProblem(await t.alice.post('/api/v1/tasks', { context: '   ', session_id: 1 }), 422);
    expect(JSON.stringify(ws.errors)).not.toContain('\\\\S');
  });

  it('echoes x-request-id on successes and on every kind of failure, and makes one up otherwise', async () => {
    const id = 'req-1234-abcd';
    const responses = [
      await t.alice.request('GET', '/api/v1/me', undefined, { 'x-request-id': id }),
      await t.alice.request('GET', '/api/v1/nope', undefined, { 'x-request-id': id }),
      await t.anonymous.request('GET', '/api/v1/me', undefined, { 'x-request-id': id }),
      await t.alice.request('POST', '/api/v1/tasks', '{bad', { 'x-request-id': id }),
      await t.alice.request('POST', '/api/v1/tasks', {}, { 'x-request-id': id }),
      await t.alice.request('DELETE', '/api/v1/tasks', undefined, { 'x-request-id': id }),
      await raw('POST', '/api/v1/tasks', 'x', { 'content-type': 'text/plain', 'x-request-id': id }),
      await raw('POST', '/api/v1/tasks', 'x'.repeat(1024 * 1024 + 1), { 'content-type': 'application/json', 'x-request-id': id }),
      await t.alice.request('GET', `/api/v1/tasks/${'9'.repeat(250)}`, undefined, { 'x-request-id': id }),
      await t.alice.request('GET', '/api/v1/tasks/%zz', undefined, { 'x-request-id': id }),
      await t.anonymous.request('GET', '/healthz', undefined, { 'x-request-id': id }),
    ];
    for (const res of responses) expect(res.headers['x-request-id'], `${res.status} ${res.text}`).toBe(id);

    const a = await t.alice.get('/api/v1/me');
    const b = await t.alice.get('/api/v1/nope');
    expect(a.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(b.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
  });
});

describeEachDialect('real faults', (dialect) => {
  it('answer a 5xx problem with no internals when the database is gone', async () => {
    const t = await createTestApp(dialect);
    try {
      const alice = await t.user('alice', [1]);
      expect((await alice.get('/api/v1/me')).status).toBe(200);
      await t.storage.close();
      for (const res of [
        await alice.get('/api/v1/me'),
        await alice.get('/api/v1/tasks'),
        await alice.post('/api/v1/tasks', { context: 'x', session_id: 1 }),
      ]) {
        expect(res.status, res.text).toBeGreaterThanOrEqual(500);
        expectProblem(res, res.status);
      }
    } finally {
      await t.app.close();
      // The storage is already closed; drop the database files/schema the harness made.
      await t.close().catch(() => undefined);
    }
  });
});
