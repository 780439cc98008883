import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestDatabase, createTestDatabase, describeEachDialect } from '../helpers/harness.js';
import { seedUsers } from '../helpers/raw-http.js';
import { type ServerProcess, buildOnce, startServer } from '../helpers/server-process.js';

/*
 * Contract section 7: an Idempotency-Key works across instances. Two real `focus serve`
 * processes on one database take the same retried request at once, as a client retrying
 * through a load balancer would send it.
 */

beforeAll(buildOnce, 180_000);

describeEachDialect('idempotent retries across two instances', (dialect) => {
  let database: TestDatabase;
  let servers: ServerProcess[];
  let token: string;
  let sessionId: number;

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    token = (await seedUsers(database.url, ['alice'])).alice as string;
    servers = await Promise.all([0, 1].map(() => startServer({ DATABASE_URL: database.url, RATE_LIMIT: '0' })));
    const created = await send(0, '/api/v1/sessions', { org_id: 1, name: 'Shared', type: 'standard', duration: 30, schedule: '2026-12-01', time: '9:00 AM' });
    sessionId = (JSON.parse(created.text) as { data: { id: number } }).data.id;
  }, 60_000);
  afterAll(async () => {
    await Promise.all((servers ?? []).map((s) => s.stop('SIGKILL')));
    await database?.drop();
  });

  async function send(instance: number, path: string, body: unknown, key?: string) {
    const res = await fetch(`${servers[instance % 2]?.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(key === undefined ? {} : { 'idempotency-key': key }) },
      body: JSON.stringify(body),
    });
    return { status: res.status, replayed: res.headers.get('idempotent-replayed'), location: res.headers.get('location'), text: await res.text() };
  }

  it('runs a request once however many retries reach either instance, and replays it on both', async () => {
    const body = { session_id: sessionId, tasks: Array.from({ length: 50 }, (_, i) => ({ context: `t${i}`, source: 'jira', source_id: i })) };
    const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => send(i, '/api/v1/tasks/bulk', body, 'retry-me')));
    expect(answers.every((a) => a.status === 200 || a.status === 409), JSON.stringify(answers.map((a) => a.status))).toBe(true);
    const done = answers.filter((a) => a.status === 200);
    expect(done.filter((a) => a.replayed === null)).toHaveLength(1);
    const original = done.find((a) => a.replayed === null);
    expect(JSON.parse(original?.text ?? '{}').meta).toEqual({ created: 50, updated: 0, unchanged: 0 });
    for (const instance of [0, 1]) {
      const again = await send(instance, '/api/v1/tasks/bulk', body, '"retry-me"');
      expect(again).toEqual({ ...original, replayed: 'true' });
    }
    // The same key for another request is refused by either instance.
    for (const instance of [0, 1]) expect((await send(instance, '/api/v1/tasks/bulk', { ...body, tasks: body.tasks.slice(1) }, 'retry-me')).status).toBe(422);
  }, 60_000);

  it('creates one session for a create retried on both instances at once', async () => {
    const body = { org_id: 1, name: 'Once', type: 'standard', duration: 30, schedule: '2026-12-02', time: '9:00 AM' };
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => send(i, '/api/v1/sessions', body, 'create-once')));
    const created = answers.filter((a) => a.status === 201);
    expect(new Set(created.map((a) => a.location)).size).toBe(1);
    const listed = await fetch(`${servers[1]?.url}/api/v1/sessions?keyword=Once`, { headers: { authorization: `Bearer ${token}` } });
    expect(((await listed.json()) as { data: unknown[] }).data).toHaveLength(1);
  }, 60_000);
});
