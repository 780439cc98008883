import { afterAll, beforeAll, expect, it } from 'vitest';
import { AUTH_CACHE_TTL_MS } from '../../src/features/auth/auth.repository.js';
import { type TestDatabase, createTestDatabase, describeEachDialect } from '../helpers/harness.js';
import { http } from '../helpers/http.js';
import { type ServerProcess, buildOnce, focusJson, startServer } from '../helpers/server-process.js';

/*
 * Each instance caches token lookups (docs/performance.md). A revocation, a new membership
 * or a changed home zone made by the CLI, another process, must reach every running
 * instance within the stated bound: at once on SQLite (the file's data version), within
 * AUTH_CACHE_TTL_MS on PostgreSQL (a NOTIFY, normally milliseconds; the TTL if it is lost).
 */

/** Requests until the answer matches: the time from the CLI's exit to the first matching answer, and how many requests that took. */
async function until(base: string, token: string, matches: (status: number, body: unknown) => boolean): Promise<{ ms: number; requests: number }> {
  const started = performance.now();
  for (let requests = 1; ; requests++) {
    const res = await http(base, 'GET', '/api/v1/me', token);
    if (matches(res.status, res.body)) return { ms: performance.now() - started, requests };
    if (performance.now() - started > 5_000) throw new Error(`still ${res.status} ${JSON.stringify(res.body)} after 5 s`);
  }
}

/** Keeps both instances' caches warm: many requests per instance, as a busy client would send. */
async function warm(servers: ServerProcess[], token: string): Promise<void> {
  for (const server of servers) {
    for (let i = 0; i < 20; i++) expect((await http(server.url, 'GET', '/api/v1/me', token)).status).toBe(200);
  }
}

beforeAll(buildOnce, 180_000);

describeEachDialect('revocation across instances with cached token lookups', (dialect) => {
  let database: TestDatabase;
  let servers: ServerProcess[] = [];
  let env: Record<string, string>;
  /**
   * The bound an instance that did not make the change is held to: SQLite, the very next
   * request; PostgreSQL, AUTH_CACHE_TTL_MS plus one request's time on a loaded machine.
   */
  const withinBound = (took: { ms: number; requests: number }[]) => {
    for (const t of took) {
      if (dialect === 'sqlite') expect(t.requests).toBe(1);
      else expect(t.ms).toBeLessThanOrEqual(AUTH_CACHE_TTL_MS + 250);
    }
  };

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    env = { DATABASE_URL: database.url, LOG_LEVEL: 'warn' };
    await focusJson(env, 'migrate');
    servers = await Promise.all([0, 1].map(() => startServer({ DATABASE_URL: database.url, RATE_LIMIT: '0' })));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await database.drop();
  });

  it('a token revoked by the CLI answers 401 on every instance within the bound', async () => {
    await focusJson(env, 'users', 'add', 'rita', '--org', '1');
    const issued = (await focusJson(env, 'tokens', 'issue', 'rita')) as { id: number; token: string };
    await warm(servers, issued.token);
    expect(await focusJson(env, 'tokens', 'revoke', String(issued.id))).toEqual({ id: issued.id, revoked: true });
    withinBound(await Promise.all(servers.map((s) => until(s.url, issued.token, (status) => status === 401))));
    // And it stays revoked: no instance serves an older cached lookup afterwards.
    for (const s of servers) for (let i = 0; i < 10; i++) expect((await http(s.url, 'GET', '/api/v1/me', issued.token)).status).toBe(401);
  });

  it('a membership and a home zone changed by the CLI reach every instance within the bound', async () => {
    await focusJson(env, 'users', 'add', 'sam', '--org', '1');
    const { token } = (await focusJson(env, 'tokens', 'issue', 'sam')) as { token: string };
    await warm(servers, token);
    await focusJson(env, 'users', 'add', 'sam', '--org', '2', '--timezone', 'Europe/Berlin');
    const expected = JSON.stringify({ data: { handle: 'sam', org_ids: [1, 2], timezone: 'Europe/Berlin', reminders: [5] } });
    withinBound(await Promise.all(servers.map((s) => until(s.url, token, (status, body) => status === 200 && JSON.stringify(body) === expected))));
  });

  it('a token issued by the CLI works on every instance at once', async () => {
    await focusJson(env, 'users', 'add', 'tess', '--org', '1');
    const { token } = (await focusJson(env, 'tokens', 'issue', 'tess')) as { token: string };
    for (const s of servers) expect((await http(s.url, 'GET', '/api/v1/me', token)).status).toBe(200);
  });
});
