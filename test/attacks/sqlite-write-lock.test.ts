import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqlitePath } from '../../src/storage/sqlite/sqlite.js';
import { type TestDatabase, createTestDatabase } from '../helpers/harness.js';
import { seedUsers, sleep } from '../helpers/raw-http.js';
import { type ServerProcess, buildOnce, startServer } from '../helpers/server-process.js';

/*
 * Issue 10, finding 6 (last part): another process holding the SQLite write lock for 8 s
 * froze the whole server, /healthz included, because better-sqlite3's busy_timeout waits
 * synchronously. Here this test process is the other one: it takes the write lock of the
 * server's file and holds it while the server is asked to write and to answer health checks.
 */

beforeAll(buildOnce, 180_000);

describe('a SQLite write lock held by another process', () => {
  let database: TestDatabase;
  let server: ServerProcess;
  let token: string;
  let holder: BetterSqlite3.Database;

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    token = (await seedUsers(database.url, ['alice'])).alice as string;
    server = await startServer({ DATABASE_URL: database.url, RATE_LIMIT: '0' });
    const created = await fetch(`${server.url}/api/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ org_id: 1, name: 'Locked', type: 'standard', duration: 30, schedule: '2026-12-01', time: '9:00 AM' }),
    });
    expect(created.status).toBe(201);
    holder = new BetterSqlite3(sqlitePath(database.url));
  }, 60_000);
  afterAll(async () => {
    if (holder?.inTransaction) holder.exec('rollback');
    holder?.close();
    await server?.stop('SIGKILL');
    await database?.drop();
  });

  const createTask = (context: string) =>
    fetch(`${server.url}/api/v1/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ context, session_id: 1 }),
    }).then(async (r) => ({ status: r.status, retryAfter: r.headers.get('retry-after'), body: (await r.json()) as Record<string, unknown> }));

  /** Polls /healthz until `until` resolves; returns the slowest answer in ms. */
  async function healthWhile(until: Promise<unknown>): Promise<{ slowest: number; count: number }> {
    let finished = false;
    void until.finally(() => (finished = true));
    let slowest = 0;
    let count = 0;
    while (!finished) {
      const started = Date.now();
      const res = await fetch(`${server.url}/healthz`);
      expect(res.status).toBe(200);
      slowest = Math.max(slowest, Date.now() - started);
      count++;
      await sleep(50);
    }
    return { slowest, count };
  }

  it('keeps answering health checks while a write waits for the lock, and writes once it is free', async () => {
    holder.exec('begin immediate');
    const started = Date.now();
    const write = createTask('waited for the lock');
    const released = sleep(2_000).then(() => holder.exec('commit'));
    const health = await healthWhile(released);
    const result = await write;
    expect(result.status, JSON.stringify(result.body)).toBe(201);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_900);
    expect(health.count).toBeGreaterThan(5);
    expect(health.slowest, `slowest /healthz: ${health.slowest} ms`).toBeLessThan(500);
  }, 30_000);

  it('answers 503 with Retry-After once the lock has been held past the wait deadline, and nothing is written', async () => {
    holder.exec('begin immediate');
    const write = createTask('never written');
    const health = await healthWhile(write);
    holder.exec('rollback');
    const result = await write;
    expect(result.status).toBe(503);
    expect(result.retryAfter).toBe('1');
    expect(result.body).toMatchObject({ type: expect.stringMatching(/\/problems\/unavailable$/) });
    expect(health.slowest, `slowest /healthz: ${health.slowest} ms`).toBeLessThan(500);
    const listed = await fetch(`${server.url}/api/v1/tasks`, { headers: { authorization: `Bearer ${token}` } });
    expect(((await listed.json()) as { data: { context: string }[] }).data.map((t) => t.context)).toEqual(['waited for the lock']);
  }, 30_000);
});
