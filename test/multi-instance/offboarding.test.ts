import { afterAll, beforeAll, expect, it } from 'vitest';
import { AUTH_CACHE_TTL_MS } from '../../src/features/auth/auth.repository.js';
import { createAuthService } from '../../src/features/auth/auth.service.js';
import { openStorage } from '../../src/storage/database.js';
import { type TestDatabase, createTestDatabase, describeEachDialect } from '../helpers/harness.js';
import { http } from '../helpers/http.js';
import { type ServerProcess, buildOnce, focusJson, startServer } from '../helpers/server-process.js';
import { type SseStream, openSse } from '../helpers/sse.js';
import { Receiver } from '../helpers/webhook-receiver.js';

/*
 * Contract section 13, off-boarding, over two real `focus serve` processes on one database
 * and the CLI as a third process: a user with a token, open event streams (one on each
 * instance), a webhook and a calendar feed. `users disable` stops every channel at once,
 * queued webhook retries included; `users remove --org` stops that org's data on every
 * channel and leaves the other org's; `tokens revoke` ends that token's streams.
 */

beforeAll(buildOnce, 180_000);

const POLL_MS = 50;
/** From the CLI's exit to a stream's end: a few of the hub's ticks (the old check ran once a second). */
const STREAM_END_MS = 500;
/**
 * Retries are scaled to 50 ms, 200 ms, 1.2 s, then 6 s (±20 %): after a fourth failed
 * attempt the fifth comes 4.8–7.2 s later, after the command has run (the CLI takes 1–3 s).
 */
const FIFTH_ATTEMPT_MS = 7_500;

const session = (name: string, orgId: number, isPublic: boolean) => ({
  org_id: orgId,
  name,
  type: 'standard',
  duration: 30,
  schedule: '2026-12-10',
  time: '9:00 AM',
  is_public: isPublic,
});

type Payload = { type: string; data: { name?: string; org_id?: number } };
const bodies = (receiver: Receiver, from = 0) => receiver.received.slice(from).map((r) => JSON.parse(r.body) as Payload);
const named = (name: string) => (received: { body: string }[]) => received.some((r) => (JSON.parse(r.body) as Payload).data.name === name);
const attemptsOf = (name: string, count: number) => (received: { body: string }[]) => received.filter((r) => (JSON.parse(r.body) as Payload).data.name === name).length >= count;
const sleepUntil = (at: number) => new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));

/** Resolves with the milliseconds until the stream ended, or fails after `ms`. */
async function endsWithin(stream: SseStream, since: number, ms: number): Promise<number> {
  const timeout = new Promise<never>((_, fail) => setTimeout(() => fail(new Error(`stream still open ${ms} ms after the command`)), ms + 2_000));
  await Promise.race([stream.ended, timeout]);
  return Date.now() - since;
}

/** Polls until `check` holds (the instance's cached lookup may serve for AUTH_CACHE_TTL_MS on PostgreSQL). */
async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + AUTH_CACHE_TTL_MS + 1_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not yet: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describeEachDialect('off-boarding across instances and channels', (dialect) => {
  let database: TestDatabase;
  let servers: ServerProcess[] = [];
  const receivers: Receiver[] = [];
  let env: Record<string, string>;
  const tokens: Record<string, { id: number; token: string }> = {};
  const base = (i: number) => (servers[i] as ServerProcess).url;
  const api = (who: string, method: string, path: string, body?: unknown, on = 0) => http(base(on), method, `/api/v1${path}`, tokens[who]?.token, body);

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    env = { DATABASE_URL: database.url, LOG_LEVEL: 'warn' };
    await focusJson(env, 'migrate');
    const storage = openStorage({ databaseUrl: database.url });
    const auth = createAuthService(storage);
    for (const who of ['alice', 'bob', 'carl', 'dora', 'dave']) {
      await auth.addUser(who, [1, 2]);
      tokens[who] = await auth.issueToken(who);
    }
    for (const i of [1, 2, 3]) tokens[`dave${i}`] = await auth.issueToken('dave');
    await storage.close();
    const serverEnv = { DATABASE_URL: database.url, RATE_LIMIT: '0', WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_SCALE: '0.01', EVENTS_POLL_MS: String(POLL_MS) };
    servers = await Promise.all([0, 1].map(() => startServer(serverEnv)));
  }, 90_000);

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await Promise.all(receivers.map((r) => r.stop()));
    await database.drop();
  });

  /** A webhook of `who` on a receiver of its own, answering 503 until told otherwise. */
  async function hook(who: string): Promise<Receiver> {
    const receiver = await new Receiver().start();
    receivers.push(receiver);
    receiver.answer = () => 503;
    const res = await api(who, 'POST', '/webhooks', { url: receiver.url, events: ['session.created', 'session.updated'] });
    expect(res.status).toBe(201);
    return receiver;
  }

  async function feed(who: string): Promise<string> {
    const res = await api(who, 'POST', '/calendar-feeds', {});
    expect(res.status).toBe(201);
    return (res.body as { data: { url: string } }).data.url;
  }

  /** Creates a session as bob and returns its id. */
  const byBob = async (name: string, orgId: number) => (await api('bob', 'POST', '/sessions', session(name, orgId, true))).body as { data: { id: number } };

  it('users disable: every token 401, open streams end, no further webhook delivery (queued retries included), the feed 404', async () => {
    const own = await api('carl', 'POST', '/sessions', session('Carl private', 2, false));
    expect(own.status).toBe(201);
    const url = await feed('carl');
    expect((await http(base(0), 'GET', url)).status).toBe(200);
    const carls = await hook('carl');
    const doras = await hook('dora');
    doras.answer = () => 200;
    const streams = await Promise.all([0, 1].map((i) => openSse(base(i), '/api/v1/events', tokens.carl?.token ?? '')));
    expect(streams.map((s) => s.status)).toEqual([200, 200]);

    // A delivery of carl's is queued: failed four times, its next retry seconds away.
    await byBob('Queued for carl', 2);
    await carls.until(attemptsOf('Queued for carl', 4), 10_000, 'four failed attempts');
    const fifthDue = Date.now() + FIFTH_ATTEMPT_MS;

    await focusJson(env, 'users', 'disable', 'carl');
    const done = Date.now();
    const mark = carls.received.length;
    carls.answer = () => 200;
    for (const stream of streams) expect(await endsWithin(stream, done, STREAM_END_MS)).toBeLessThanOrEqual(STREAM_END_MS);
    for (const i of [0, 1]) await eventually(async () => (await api('carl', 'GET', '/me', undefined, i)).status === 401, `carl's token refused on instance ${i}`);
    expect((await http(base(1), 'GET', url)).status).toBe(404);
    expect((await openSse(base(1), '/api/v1/events', tokens.carl?.token ?? '')).status).toBe(401);

    // Others' deliveries go on; carl's get nothing, neither the new event nor the queued retry.
    await byBob('After carl left', 2);
    await doras.until(named('After carl left'), 10_000);
    await sleepUntil(fifthDue);
    expect(doras.received.length).toBeGreaterThan(0);
    expect(bodies(carls, mark).map((p) => p.data.name)).toEqual([]);

    // Enabled again: the token and the feed work; what was withheld meanwhile stays unsent.
    await focusJson(env, 'users', 'enable', 'carl');
    await eventually(async () => (await api('carl', 'GET', '/me', undefined, 1)).status === 200, "carl's token accepted again");
    expect((await http(base(0), 'GET', url)).status).toBe(200);
  }, 120_000);

  it('users remove --org: that org stops on every channel, queued deliveries included; the other org goes on', async () => {
    const mine = await Promise.all([1, 2].map(async (org) => (await api('alice', 'POST', '/sessions', session(`Alice org ${org} CONFIDENTIAL`, org, false))).body as { data: { id: number } }));
    const url = await feed('alice');
    const before = String((await http(base(0), 'GET', url)).body);
    expect(before).toContain('Alice org 1 CONFIDENTIAL');
    const alices = await hook('alice');
    const stream = await openSse(base(1), '/api/v1/events', tokens.alice?.token ?? '');
    expect(stream.status).toBe(200);

    await byBob('Queued org 1', 1);
    await alices.until(attemptsOf('Queued org 1', 4), 10_000, 'four failed attempts');
    const fifthDue = Date.now() + FIFTH_ATTEMPT_MS;

    await focusJson(env, 'users', 'remove', 'alice', '--org', '1');
    const done = Date.now();
    const mark = alices.received.length;
    alices.answer = () => 200;
    // The stream ends, so that a reconnect starts with what alice may see now.
    expect(await endsWithin(stream, done, STREAM_END_MS)).toBeLessThanOrEqual(STREAM_END_MS);
    for (const i of [0, 1]) {
      await eventually(async () => (await api('alice', 'GET', `/sessions/${mine[0]?.data.id}`, undefined, i)).status === 404, `org 1 hidden on instance ${i}`);
      expect((await api('alice', 'GET', `/sessions/${mine[1]?.data.id}`, undefined, i)).status).toBe(200);
    }
    const after = String((await http(base(1), 'GET', url)).body);
    expect(after).not.toContain('Alice org 1');
    expect(after).toContain('Alice org 2 CONFIDENTIAL');

    const again = await openSse(base(0), '/api/v1/events', tokens.alice?.token ?? '');
    const one = await byBob('New in org 1', 1);
    const two = await byBob('New in org 2', 2);
    const entryId = (e: { data: string }) => String((JSON.parse(e.data) as { id: unknown }).id);
    await again.waitFor((e) => e.event === 'change' && entryId(e) === String(two.data.id), 10_000);
    expect(again.events.filter((e) => e.event === 'change' && entryId(e) === String(one.data.id))).toEqual([]);
    again.close();
    await alices.until(named('New in org 2'), 10_000);
    await sleepUntil(fifthDue);
    // Org 2's events arrive (alice's own may be among them, retried); none of org 1's, queued or new.
    const delivered = bodies(alices, mark);
    expect(delivered.map((p) => p.data.name)).toContain('New in org 2');
    expect(delivered.filter((p) => p.data.org_id !== 2).map((p) => `${p.data.org_id} ${p.data.name}`)).toEqual([]);
  }, 120_000);

  it('tokens revoke ends that token’s streams at once, on each instance, and only those', async () => {
    const kept = await openSse(base(0), '/api/v1/events', tokens.dave?.token ?? '');
    for (const [i, who] of ['dave1', 'dave2', 'dave3'].entries()) {
      const stream = await openSse(base(i % 2), '/api/v1/events', tokens[who]?.token ?? '');
      expect(stream.status).toBe(200);
      // Apart from the hub's once-a-second look: the revocation itself must end it.
      await new Promise((r) => setTimeout(r, 300 + 200 * i));
      await focusJson(env, 'tokens', 'revoke', String(tokens[who]?.id));
      expect(await endsWithin(stream, Date.now(), STREAM_END_MS)).toBeLessThanOrEqual(STREAM_END_MS);
    }
    const ended = await Promise.race([kept.ended.then(() => true), new Promise((r) => setTimeout(() => r(false), 300))]);
    expect(ended).toBe(false);
    kept.close();
  }, 120_000);
});
