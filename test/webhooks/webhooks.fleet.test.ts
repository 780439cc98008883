import { Webhook } from 'standardwebhooks';
import { afterEach, beforeAll, expect, it } from 'vitest';
import { createAuthService } from '../../src/features/auth/auth.service.js';
import { LEASE_MS } from '../../src/features/webhooks/webhooks.dispatcher.js';
import { openStorage } from '../../src/storage/database.js';
import { type TestDatabase, createTestDatabase, describeEachDialect } from '../helpers/harness.js';
import { http } from '../helpers/http.js';
import { type ServerProcess, buildOnce, startServer } from '../helpers/server-process.js';
import { Receiver } from '../helpers/webhook-receiver.js';

/*
 * Contract section 9, durability, with real `focus serve` processes: an event is recorded
 * with its change, so a SIGKILL right after the 201 loses nothing (delivered after the
 * restart); two instances on one database share the outbox and deliver each event once.
 */

beforeAll(buildOnce, 180_000);

const SESSION = { org_id: 1, name: 'Fleet', type: 'standard', duration: 60, schedule: '2026-12-10', time: '9:00 AM' };

describeEachDialect('webhooks: a fleet of real processes', (dialect) => {
  let database: TestDatabase | undefined;
  let servers: ServerProcess[] = [];
  let receiver: Receiver | undefined;
  afterEach(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    servers = [];
    await receiver?.stop();
    await database?.drop();
  });

  async function setUp(instances: number) {
    database = await createTestDatabase(dialect);
    const env = { DATABASE_URL: database.url, RATE_LIMIT: '0', WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_SCALE: '0.01' };
    servers = await Promise.all(Array.from({ length: instances }, () => startServer(env)));
    const storage = openStorage({ databaseUrl: database.url });
    const auth = createAuthService(storage);
    await auth.addUser('alice', [1]);
    const token = (await auth.issueToken('alice')).token;
    await storage.close();
    receiver = await new Receiver().start();
    const hook = await http(servers[0]!.url, 'POST', '/api/v1/webhooks', token, { url: receiver.url, events: ['task.created'] });
    expect(hook.status).toBe(201);
    const session = await http(servers[0]!.url, 'POST', '/api/v1/sessions', token, SESSION);
    return { env, token, secret: (hook.body as { data: { secret: string } }).data.secret, sessionId: (session.body as { data: { id: number } }).data.id };
  }

  it('delivers the events of changes acknowledged right before a SIGKILL, after the restart', async () => {
    const { env, token, secret, sessionId } = await setUp(1);
    // The receiver is down (503) until the server was killed: nothing can be delivered before.
    let up = false;
    receiver!.answer = () => (up ? 200 : 503);
    const created: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await http(servers[0]!.url, 'POST', '/api/v1/tasks', token, { context: `Task ${i}`, session_id: sessionId });
      expect(res.status).toBe(201);
      created.push((res.body as { data: { id: string } }).data.id);
    }
    servers[0]!.kill('SIGKILL');
    await servers[0]!.exited;
    up = true;
    const restartedAt = Date.now();
    servers = [await startServer(env)];
    const delivered = () => {
      const ids = new Set<string>();
      for (const r of receiver!.received.filter((x) => x.at >= restartedAt)) {
        const p = new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as { data: { id: string } };
        ids.add(p.data.id);
      }
      return ids;
    };
    // Deliveries the killed process had claimed wait for their lease (LEASE_MS, 25 s) to end.
    await receiver!.until(() => delivered().size >= 20, LEASE_MS + 20_000, 'the 20 events after the restart');
    expect([...delivered()].sort()).toEqual([...created].sort());
  }, 90_000);

  it('shares the outbox between two instances: each of 240 events delivered exactly once', async () => {
    const { token, sessionId } = await setUp(2);
    const ids: string[] = [];
    let next = 0;
    // 240 changes, alternately on each instance, 10 at a time: within one webhook's quota
    // (DELIVERY_QUOTA_PER_WEBHOOK, 250), past which the oldest pending ones would be dropped.
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        for (let n = next++; n < 240; n = next++) {
          const res = await http(servers[n % 2]!.url, 'POST', '/api/v1/tasks', token, { context: `Burst ${n}`, session_id: sessionId });
          expect(res.status).toBe(201);
          ids.push((res.body as { data: { id: string } }).data.id);
        }
      }),
    );
    // One webhook takes two attempts at a time (contract section 13: concurrency per webhook is bounded).
    await receiver!.until((r) => r.length >= 240, 150_000, '240 deliveries');
    // Time for a duplicate to show up, were there one.
    await new Promise((r) => setTimeout(r, 2_000));
    const eventIds = receiver!.received.map((r) => r.headers['webhook-id']);
    expect(eventIds).toHaveLength(240);
    expect(new Set(eventIds).size).toBe(240);
    const taskIds = receiver!.payloads().map((p) => p.data.id as string);
    expect(new Set(taskIds).size).toBe(240);
    expect([...taskIds].sort()).toEqual([...ids].sort());
  }, 240_000);
});
