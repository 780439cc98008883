import { sql } from 'kysely';
import { afterEach, beforeAll, expect, it } from 'vitest';
import { createAuthService } from '../../src/features/auth/auth.service.js';
import { type Storage, openStorage } from '../../src/storage/database.js';
import { DELIVERY_QUOTA_PER_WEBHOOK } from '../../src/features/webhooks/webhooks.outbox.js';
import { type TestDatabase, createTestDatabase, describeEachDialect } from '../helpers/harness.js';
import { http } from '../helpers/http.js';
import { type ServerProcess, buildOnce, startServer } from '../helpers/server-process.js';
import { Receiver } from '../helpers/webhook-receiver.js';

/*
 * Contract section 13, webhooks between tenants, over a real `focus serve` process: one
 * user's silent receivers never delay another user's deliveries by more than 3 s (also on
 * one shared host); a deleted webhook gets nothing after the 204; what an import stores
 * for its deliveries is bounded (one payload per event, a quota per user) and a re-import
 * that changes nothing stores and sends nothing.
 */

beforeAll(buildOnce, 180_000);

const sessionIn = (org: number) => ({ org_id: org, name: 'Tenants', type: 'standard', duration: 60, schedule: '2026-12-10', time: '9:00 AM' });

describeEachDialect('webhooks: tenants never hurt each other', (dialect) => {
  let database: TestDatabase | undefined;
  let server: ServerProcess | undefined;
  let storage: Storage | undefined;
  const receivers: Receiver[] = [];
  afterEach(async () => {
    await server?.stop();
    server = undefined;
    await Promise.all(receivers.splice(0).map((r) => r.stop()));
    await storage?.close();
    storage = undefined;
    await database?.drop();
  });

  /** A server, and one user per handle (each in the org of the same index + 1) with a token and a session. */
  async function setUp(handles: string[]) {
    database = await createTestDatabase(dialect);
    server = await startServer({ DATABASE_URL: database.url, RATE_LIMIT: '0', WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_SCALE: '0.01' });
    storage = openStorage({ databaseUrl: database.url });
    const auth = createAuthService(storage);
    const users: { token: string; sessionId: number }[] = [];
    for (const [i, handle] of handles.entries()) {
      await auth.addUser(handle, [i + 1]);
      const token = (await auth.issueToken(handle)).token;
      const session = await http(server.url, 'POST', '/api/v1/sessions', token, sessionIn(i + 1));
      users.push({ token, sessionId: (session.body as { data: { id: number } }).data.id });
    }
    return users;
  }

  async function receiver(): Promise<Receiver> {
    const r = await new Receiver().start();
    receivers.push(r);
    return r;
  }

  async function hook(token: string, url: string, events = ['task.created']): Promise<string> {
    const res = await http(server!.url, 'POST', '/api/v1/webhooks', token, { url, events });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return (res.body as { data: { id: string } }).data.id;
  }

  async function task(user: { token: string; sessionId: number }, context: string): Promise<string> {
    const res = await http(server!.url, 'POST', '/api/v1/tasks', user.token, { context, session_id: user.sessionId });
    expect(res.status).toBe(201);
    return (res.body as { data: { id: string } }).data.id;
  }

  for (const sameHost of [false, true]) {
    it(`delivers a victim's event within 3 s while another user's 20 webhooks never answer${sameHost ? ', all on one host' : ''}`, async () => {
      const [attacker, victim] = (await setUp(['mallory', 'victor'])) as [{ token: string; sessionId: number }, { token: string; sessionId: number }];
      const silent = await receiver();
      silent.silent = (r) => r.path.startsWith('/silent');
      const honest = sameHost ? silent : await receiver();
      for (let i = 0; i < 20; i++) await hook(attacker.token, `${silent.base}/silent/${i}`);
      await hook(victim.token, `${honest.base}/victim`);
      // 30 events for each silent webhook: 600 attempts that each hold a connection for the 10 s timeout.
      for (let i = 0; i < 30; i++) await task(attacker, `flood ${i}`);
      await silent.until((r) => r.filter((x) => x.path.startsWith('/silent')).length >= 4, 15_000, 'the silent webhooks being attempted');
      for (let round = 0; round < 2; round++) {
        const at = Date.now();
        const id = await task(victim, `victim ${round}`);
        const arrived = () => honest.received.find((r) => r.path === '/victim' && (JSON.parse(r.body) as { data: { id: string } }).data.id === id);
        await honest.until(() => arrived() !== undefined, 30_000, "the victim's delivery").catch(() => undefined);
        const waited = (arrived()?.at ?? Date.now()) - at;
        expect(waited, `the victim's delivery waited ${waited} ms`).toBeLessThan(3_000);
        // Again a few seconds later, while the silent attempts still hold their connections.
        await new Promise((r) => setTimeout(r, 3_000));
      }
    }, 120_000);
  }

  it('sends nothing to a deleted webhook after the 204, queued deliveries included', async () => {
    const [alice] = (await setUp(['alice'])) as [{ token: string; sessionId: number }];
    const slow = await receiver();
    slow.delayMs = 400;
    const id = await hook(alice.token, slow.url);
    for (let i = 0; i < 60; i++) await task(alice, `queued ${i}`);
    await slow.until((r) => r.length >= 3, 20_000, 'the first deliveries');
    const res = await http(server!.url, 'DELETE', `/api/v1/webhooks/${id}`, alice.token);
    expect(res.status).toBe(204);
    const answeredAt = Date.now();
    await new Promise((r) => setTimeout(r, 3_000));
    // An attempt already on the wire when the DELETE was answered may land a moment later; nothing starts after.
    const late = slow.received.filter((r) => r.at > answeredAt + 100);
    expect(late.map((r) => r.at - answeredAt)).toEqual([]);
  }, 60_000);

  /** Bytes the outbox takes: deliveries and payloads, with their indexes. */
  async function outboxBytes(): Promise<number> {
    const db = storage!.db;
    if (dialect === 'postgres') {
      // What the live rows take: dead row versions (retries, quota drops) are space autovacuum gives back for reuse.
      await sql`vacuum full webhook_deliveries, webhook_payloads`.execute(db);
      const { rows } = await sql<{ n: string }>`select coalesce(sum(pg_total_relation_size(c.oid)), 0) as n from pg_class c
        join pg_namespace s on s.oid = c.relnamespace and s.nspname = current_schema()
        where c.relkind = 'r' and c.relname like 'webhook\_%' and c.relname in ('webhook_deliveries', 'webhook_payloads')`.execute(db);
      return Number(rows[0]?.n ?? 0);
    }
    const { rows } = await sql<{ n: number | null }>`select sum(pgsize) as n from dbstat where name in
      (select name from sqlite_schema where tbl_name in ('webhook_deliveries', 'webhook_payloads'))`.execute(db);
    return Number(rows[0]?.n ?? 0);
  }

  /** Waits until the fan-out has passed every change (the change log's head). */
  async function fannedOut(): Promise<void> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { rows } = await sql<{ behind: number }>`select case when (select position from webhook_state where name = 'fanout') >=
        (select coalesce(max(position), 0) from changes) and not exists (select 1 from changes where position is null) then 0 else 1 end as behind`.execute(storage!.db);
      if (Number(rows[0]?.behind) === 0) return;
      if (Date.now() > deadline) throw new Error('the fan-out did not catch up');
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  it('stores about 2 MB for an import of 1,000 tasks with 20 webhooks, the oldest dropped past the quota, and nothing for a re-import', async () => {
    const [alice] = (await setUp(['alice'])) as [{ token: string; sessionId: number }];
    // Receivers that are down: every delivery stays pending (the worst case for storage).
    const down = await receiver();
    down.answer = () => 503;
    const hooks: string[] = [];
    for (let i = 0; i < 20; i++) hooks.push(await hook(alice.token, `${down.base}/down/${i}`, ['task.created', 'task.updated']));
    await fannedOut();
    const before = await outboxBytes();
    const tasks = Array.from({ length: 1_000 }, (_, i) => ({ context: `Imported task number ${i} with a realistic title`, source: 'linear', source_id: `LIN-${i}` }));
    const imported = await http(server!.url, 'POST', '/api/v1/tasks/bulk', alice.token, { session_id: alice.sessionId, tasks });
    expect(imported.status).toBe(200);
    expect((imported.body as { meta: unknown }).meta).toEqual({ created: 1_000, updated: 0, unchanged: 0 });
    await fannedOut();
    const grown = (await outboxBytes()) - before;
    console.info(`[${dialect}] the outbox grew by ${grown} bytes for 1,000 tasks × 20 webhooks`);
    expect(grown, `the outbox grew by ${grown} bytes`).toBeLessThan(2.5 * 1024 * 1024);

    // Past the quota the oldest go first: each webhook keeps its newest DELIVERY_QUOTA_PER_WEBHOOK events (tasks are created in key order).
    const ids = (imported.body as { data: { id: string }[] }).data.map((t) => Number(t.id)).sort((a, b) => a - b);
    const kept = await storage!.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_payloads as p', 'p.id', 'd.payload_id')
      .select(['d.webhook_id', 'p.body'])
      .where('d.webhook_id', '=', Number(hooks[0]))
      .execute();
    const keptTasks = kept.map((k) => Number((JSON.parse(k.body) as { data: { id: string } }).data.id)).sort((a, b) => a - b);
    expect(keptTasks).toEqual(ids.slice(-DELIVERY_QUOTA_PER_WEBHOOK));

    // The same import again changes nothing: no change, no event, no byte.
    const changesBefore = Number((await sql<{ n: number }>`select count(*) as n from changes`.execute(storage!.db)).rows[0]?.n);
    const payloadsBefore = Number((await sql<{ n: number }>`select count(*) as n from webhook_payloads`.execute(storage!.db)).rows[0]?.n);
    const again = await http(server!.url, 'POST', '/api/v1/tasks/bulk', alice.token, { session_id: alice.sessionId, tasks });
    expect(again.status).toBe(200);
    expect((again.body as { meta: unknown }).meta).toEqual({ created: 0, updated: 0, unchanged: 1_000 });
    expect((again.body as { data: { id: string; updated_at: string }[] }).data).toEqual((imported.body as { data: unknown[] }).data);
    await new Promise((r) => setTimeout(r, 1_000));
    await fannedOut();
    expect(Number((await sql<{ n: number }>`select count(*) as n from changes`.execute(storage!.db)).rows[0]?.n)).toBe(changesBefore);
    expect(Number((await sql<{ n: number }>`select count(*) as n from webhook_payloads`.execute(storage!.db)).rows[0]?.n)).toBe(payloadsBefore);
  }, 180_000);
});
