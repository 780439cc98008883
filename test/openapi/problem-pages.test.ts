import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBLEMS } from '../../src/toolkit/problem.catalog.js';
import { DIALECTS, type TestDatabase, createTestDatabase } from '../helpers/harness.js';
import { http } from '../helpers/http.js';
import { rawConnect, seedUsers } from '../helpers/raw-http.js';
import { type ServerProcess, buildOnce, startServer } from '../helpers/server-process.js';

/*
 * Contract section 14, "Problem types": a problem's `type` is `<PUBLIC_URL or the
 * request's origin>/problems/<slug>`, and the server answers that address with a short
 * human page. Over HTTP against a real server process: every kind in the catalog has its
 * page, and the `type` of every problem provoked here resolves to one.
 */

interface Problem {
  type: string;
  title: string;
  status: number;
}

async function page(url: string): Promise<{ status: number; headers: Record<string, string>; text: string }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(15_000) });
  return { status: res.status, headers: Object.fromEntries(res.headers), text: await res.text() };
}

for (const dialect of DIALECTS) {
  describe(`problem type pages [${dialect}]`, () => {
    let database: TestDatabase;
    let server: ServerProcess;
    let tokens: Record<string, string>;

    beforeAll(async () => {
      await buildOnce();
      database = await createTestDatabase(dialect);
      tokens = await seedUsers(database.url, ['alice', 'bob']);
      server = await startServer({ DATABASE_URL: database.url, RATE_LIMIT: '0' });
    }, 120_000);

    afterAll(async () => {
      await server?.stop();
      await database?.drop();
    });

    it('serves a page for every kind of problem in the catalog, that loads nothing and is framed nowhere', async () => {
      const index = await page(`${server.url}/problems`);
      expect(index.status).toBe(200);
      for (const [slug, kind] of Object.entries(PROBLEMS)) {
        expect(index.text).toContain(`href="/problems/${slug}"`);
        const got = await page(`${server.url}/problems/${slug}`);
        expect(got.status, slug).toBe(200);
        expect(got.headers['content-type']).toBe('text/html; charset=utf-8');
        expect(got.headers['content-security-policy']).toMatch(/default-src 'none'/);
        expect(got.headers['x-frame-options']).toBe('DENY');
        expect(got.text).toContain(`<h1>${kind.title}</h1>`);
        expect(got.text).toContain('When it happens');
        expect(got.text).toContain('What to do');
        expect(got.text).not.toMatch(/<script/i);
      }
    }, 60_000);

    it('gives every problem it answers a `type` on the address the client used, which resolves to its page', async () => {
      const alice = tokens.alice as string;
      const session = await http(server.url, 'POST', '/api/v1/sessions', alice, { org_id: 1, name: 'Mine', type: 'standard', duration: 25, schedule: '2026-12-01', time: '9:00 AM' });
      const id = (session.body as { data: { id: number } }).data.id;
      const etagless = { 'if-match': '"not-the-etag"' };
      const answers = [
        await http(server.url, 'GET', '/api/v1/tasks'), // 401
        await http(server.url, 'GET', '/api/v1/no-such-thing', alice), // 404
        await http(server.url, 'DELETE', '/api/v1/me', alice), // 405
        await http(server.url, 'POST', '/api/v1/tasks', alice, undefined, { 'content-type': 'application/json' }), // 400
        await http(server.url, 'POST', '/api/v1/tasks', alice, undefined, { 'content-type': 'text/plain' }), // 415
        await http(server.url, 'POST', '/api/v1/tasks', alice, { context: ' ', session_id: id }), // 422
        await http(server.url, 'PUT', `/api/v1/sessions/${id}`, tokens.bob, { name: 'Theirs' }), // 403 or 404
        await http(server.url, 'PUT', `/api/v1/sessions/${id}`, alice, { name: 'Again' }, etagless), // 412
        await http(server.url, 'POST', '/api/v1/tasks', alice, { context: 'a', session_id: id }, { 'idempotency-key': 'k1' }),
        await http(server.url, 'POST', '/api/v1/tasks', alice, { context: 'b', session_id: id }, { 'idempotency-key': 'k1' }), // 422 reused
        await http(server.url, 'GET', '/api/v1/changes?cursor=x', alice), // 400/410
      ];
      const problems = answers.filter((a) => a.status >= 400).map((a) => a.body as Problem);
      const slugs = new Set(problems.map((p) => p.type.split('/').pop()));
      for (const slug of ['unauthorized', 'not-found', 'method-not-allowed', 'bad-request', 'unsupported-media-type', 'validation-failed', 'precondition-failed', 'idempotency-key-reused']) {
        expect(slugs, slug).toContain(slug);
      }
      for (const problem of problems) {
        expect(problem.type.startsWith(`${server.url}/problems/`), problem.type).toBe(true);
        const got = await page(problem.type);
        expect(got.status, problem.type).toBe(200);
        expect(got.text).toContain(`HTTP status <strong>${problem.status}</strong>`);
      }

      // A request the HTTP parser refuses (headers over 16 KiB): its Host is unknown, so the
      // `type` is relative to the address the client used.
      const raw = await rawConnect(server.url);
      raw.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
      const refused = await raw.response();
      raw.destroy();
      expect(refused?.status).toBe(431);
      const type = (JSON.parse(refused?.body ?? '{}') as Problem).type;
      expect(type).toBe('/problems/headers-too-large');
      expect((await page(new URL(type, server.url).href)).status).toBe(200);
    }, 60_000);

    it('answers an unknown kind with a 404 whose own type resolves', async () => {
      const missing = await http(server.url, 'GET', '/problems/no-such-problem');
      expect(missing.status).toBe(404);
      expect((await page((missing.body as Problem).type)).status).toBe(200);
    });
  });
}

describe('problem types under PUBLIC_URL', () => {
  let database: TestDatabase;
  let server: ServerProcess;

  beforeAll(async () => {
    await buildOnce();
    database = await createTestDatabase('sqlite');
    server = await startServer({ DATABASE_URL: database.url, PUBLIC_URL: 'https://focus.example.com/base/' });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await database?.drop();
  });

  it('start with PUBLIC_URL, whatever Host the request names', async () => {
    const res = await http(server.url, 'GET', '/api/v1/tasks', undefined, undefined, { host: 'evil.example' });
    expect(res.status).toBe(401);
    expect((res.body as Problem).type).toBe('https://focus.example.com/base/problems/unauthorized');
  });
});
