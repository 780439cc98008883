import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAuthService } from '../../src/features/auth/auth.service.js';
import { type Storage, openStorage } from '../../src/storage/database.js';
import { type TestDatabase, createTestDatabase, describeEachDialect } from '../helpers/harness.js';
import { http } from '../helpers/http.js';
import { type ServerProcess, buildOnce, startServer } from '../helpers/server-process.js';
import { type SseStream, openSse } from '../helpers/sse.js';
import { Receiver } from '../helpers/webhook-receiver.js';

/*
 * Reminders (contract section 10) on a fleet: two `focus serve` processes on one database.
 * Each reminder is one `session.starting` webhook delivery across the fleet, within 5 s of
 * its instant, and one event on each stream of its person, whichever instance holds it.
 */

beforeAll(buildOnce, 180_000);

const minute = 60_000;
const session = (name: string, extra: Record<string, unknown> = {}) => ({
  org_id: 1, name, type: 'standard', duration: 30, schedule: '2026-05-01', time: '9:00 AM', is_public: true, ...extra,
});

describeEachDialect('reminders across two instances', (dialect) => {
  let database: TestDatabase;
  let storage: Storage;
  let servers: ServerProcess[] = [];
  let receiver: Receiver;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    const env = { DATABASE_URL: database.url, RATE_LIMIT: '0', WEBHOOK_ALLOW_PRIVATE: '1' };
    servers = await Promise.all([0, 1].map(() => startServer(env)));
    storage = openStorage({ databaseUrl: database.url });
    const auth = createAuthService(storage);
    for (const handle of ['alice', 'bob']) {
      await auth.addUser(handle, [1]);
      tokens[handle] = (await auth.issueToken(handle)).token;
    }
    receiver = await new Receiver().start();
  }, 60_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await receiver.stop();
    await storage.close();
    await database.drop();
  });

  const call = async (n: number, who: string, method: string, path: string, body?: unknown) => {
    const res = await http(servers[n]?.url ?? '', method, path, tokens[who], body);
    expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
    return res.body as { data: { id: number } };
  };

  it('delivers each reminder once across the fleet, within 5 s, and once to each stream of its person', async () => {
    for (const who of ['alice', 'bob']) await call(0, who, 'POST', '/api/v1/webhooks', { url: `${receiver.base}/${who}`, events: ['session.starting'] });
    await call(1, 'alice', 'PUT', '/api/v1/me', { timezone: 'UTC', reminders: [2] });
    const streams: SseStream[] = await Promise.all(servers.map((s) => openSse(s.url, '/api/v1/events', tokens.alice ?? '')));
    const own = (await call(0, 'alice', 'POST', '/api/v1/sessions', session('own', { reminders: [1] }))).data.id;
    const home = (await call(1, 'alice', 'POST', '/api/v1/sessions', session('home'))).data.id;
    for (const id of [own, home]) await call(1, 'bob', 'POST', `/api/v1/sessions/${id}/join`);
    // Moved in the index so that both reminders fall 3 s from now: own's 1 minute, home's 2 (alice's; bob's 5 is long past).
    const at = Date.now() + 3_000;
    for (const [id, lead] of [[own, 1], [home, 2]] as const) {
      const startsAt = new Date(at + lead * minute).toISOString();
      await storage.db.updateTable('session_occurrences').set({ starts_at: startsAt, ends_at: new Date(at + 60 * minute).toISOString() }).where('session_id', '=', id).execute();
    }
    await receiver.until((r) => r.length >= 3, 15_000, 'three reminders');
    for (const s of streams) await s.waitFor((e) => e.event === 'session.starting' && (JSON.parse(e.data) as { session_id: number }).session_id === home, 5_000);
    // Long enough for a second instance's copy to show.
    await new Promise((r) => setTimeout(r, 3_000));
    const got = receiver.received.map((r) => {
      const p = JSON.parse(r.body) as { type: string; timestamp: string; data: { id: number; minutes_before: number } };
      expect(r.at - Date.parse(p.timestamp)).toBeLessThan(5_000);
      return `${r.path} ${p.type} ${p.data.id} ${p.data.minutes_before}`;
    });
    expect(got.sort()).toEqual([`/alice session.starting ${home} 2`, `/alice session.starting ${own} 1`, `/bob session.starting ${own} 1`].sort());
    for (const s of streams) {
      const starting = s.events.filter((e) => e.event === 'session.starting').map((e) => JSON.parse(e.data) as { session_id: number; minutes_before: number });
      expect(starting.map((e) => `${e.session_id} ${e.minutes_before}`).sort()).toEqual([`${home} 2`, `${own} 1`].sort());
      s.close();
    }
  }, 60_000);
});
