import type { FastifyInstance } from 'fastify';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestDatabase, createTestDatabase, describeEachDialect, testConfig } from '../../../test/helpers/harness.js';
import { http } from '../../../test/helpers/http.js';
import { type SseStream, openSse } from '../../../test/helpers/sse.js';
import { buildApp } from '../../app/app.js';
import { startJobs } from '../../server.jobs.js';
import { type Storage, openStorage } from '../../storage/database.js';
import { createAuthService } from '../auth/auth.service.js';

/*
 * The event stream over a real socket, one in-process server per database (the
 * multi-instance suite covers several processes). Short heartbeat and poll intervals,
 * and request deadlines far shorter than the streams live.
 */

const HEARTBEAT_MS = 300;
/**
 * The header and body deadlines (a request gets both): far shorter than a stream lives, yet
 * long enough that this process's own requests, sent from the loop that also serves them,
 * arrive in time on a machine busy with other suites (200 ms gave 408s there).
 */
const DEADLINE_MS = 1_000;
const session = (name: string, isPublic: boolean, orgId = 1) => ({
  org_id: orgId, name, type: 'standard', duration: 30, schedule: '2026-05-01', time: '9:00 AM', is_public: isPublic,
});

describeEachDialect('GET /events', (dialect) => {
  let database: TestDatabase;
  let storage: Storage;
  let app: FastifyInstance;
  let base = '';
  const tokens: Record<string, { token: string; id: number }> = {};
  const opened: SseStream[] = [];

  const call = (who: string, method: string, path: string, body?: unknown) => http(base, method, path, tokens[who]?.token, body);
  /** Creates a session or task and returns its id; any other answer fails the test with its body. */
  const create = async (who: string, path: string, body: unknown): Promise<string> => {
    const res = await call(who, 'POST', path, body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return String((res.body as { data: { id: number | string } }).data.id);
  };
  const stream = async (who: string, path = '/api/v1/events', headers: Record<string, string> = {}) => {
    const s = await openSse(base, path, tokens[who]?.token ?? '', headers);
    opened.push(s);
    return s;
  };
  const data = (e: { data: string }) => JSON.parse(e.data) as { type: string; id: string; deleted: boolean; record: { name?: string } | null };

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    storage = openStorage({ databaseUrl: database.url });
    const env = { EVENTS_HEARTBEAT_MS: String(HEARTBEAT_MS), EVENTS_POLL_MS: '50', EVENTS_STREAMS_PER_TOKEN: '2', HEADERS_TIMEOUT_MS: String(DEADLINE_MS), BODY_TIMEOUT_MS: String(DEADLINE_MS) };
    app = await buildApp({ config: testConfig(database.url, env), storage, logger: false });
    startJobs(app);
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    const auth = createAuthService(storage);
    for (const [handle, orgs] of [['alice', [1]], ['bob', [1]], ['carol', [2]], ...Array.from({ length: 40 }, (_, i) => [`u${i}`, [1]])] as [string, number[]][]) {
      await auth.addUser(handle, orgs);
      tokens[handle] = await auth.issueToken(handle);
    }
  });

  afterAll(async () => {
    for (const s of opened) s.close();
    await app.close();
    await storage.close();
    await database.drop();
  });

  it('follows an org its user joins while the stream is open, within the token check (1 s)', async () => {
    const auth = createAuthService(storage);
    await auth.addUser('dave', [1]);
    tokens.dave = await auth.issueToken('dave');
    const dave = await stream('dave');
    const witness = await stream('carol');
    expect(dave.status).toBe(200);
    const before = await create('carol', '/api/v1/sessions', session('org 2 before dave joined', true, 2));
    // A change is positioned up to 200 ms after its commit, and the hub moves every stream past
    // it in one look: once the witness has it, Dave's stream is past it too. Joining earlier,
    // Dave would rightly be told of it (a change of his new org the hub had not reached yet).
    await witness.waitFor((e) => e.event === 'change' && data(e).id === before);
    witness.close();
    await auth.addUser('dave', [2]);
    // The hub's token check runs once a second; give it two.
    await new Promise((resolve) => setTimeout(resolve, 2_200));
    const after = await create('carol', '/api/v1/sessions', session('org 2 after dave joined', true, 2));
    const seen = await dave.waitFor((e) => e.event === 'change' && data(e).id === after);
    expect(data(seen).record?.name).toBe('org 2 after dave joined');
    expect(dave.events.some((e) => e.event === 'change' && data(e).id === before)).toBe(false);
  });

  it('pushes each change to the streams of the users who may see it, and only to them', async () => {
    const [alice, bob, carol] = [await stream('alice'), await stream('bob'), await stream('carol')];
    expect(alice.status).toBe(200);
    expect(alice.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const hidden = await create('bob', '/api/v1/sessions', session('bob private', false));
    const shown = await create('bob', '/api/v1/sessions', session('bob public', true));
    const seen = await alice.waitFor((e) => e.event === 'change' && data(e).id === shown);
    expect(data(seen).record?.name).toBe('bob public');
    expect(seen.id).toMatch(/^[A-Za-z0-9_-]+$/);
    await bob.waitFor((e) => e.event === 'change' && data(e).id === hidden);
    await bob.waitFor((e) => e.event === 'change' && data(e).id === shown);
    expect(alice.events.filter((e) => e.event === 'change' && data(e).id === hidden)).toEqual([]);
    expect(carol.events).toEqual([]);
    for (const s of [alice, bob, carol]) s.close();
  });

  it('gives every stream of one user every change, while changes keep coming', async () => {
    const streams = await Promise.all(Array.from({ length: 12 }, (_, i) => stream(`u${30 + (i % 6)}`)));
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      ids.push(await create('alice', '/api/v1/sessions', session(`burst ${i}`, true)));
      if (i % 3 === 0) await new Promise((r) => setTimeout(r, 60));
    }
    for (const s of streams) {
      await s.waitFor((e) => e.event === 'change' && data(e).id === ids.at(-1), 5_000);
      expect(s.events.filter((e) => e.event === 'change').map((e) => data(e).id)).toEqual(ids);
      s.close();
    }
    await new Promise((r) => setTimeout(r, 100));
  });

  it('keeps every stream opened in bursts, while the token check runs, and gives each every change exactly once', async () => {
    // The first stream of a token, opened while the hub's token check (every second) was
    // reading the tokens of the streams open before, used to be ended by that check: the
    // 1,000-stream bench then received 64–85 % of the events. So: users whose tokens no
    // check has seen, opening a stream each, 32 at a time, just as the next check is due.
    const auth = createAuthService(storage);
    const burstUsers = Array.from({ length: 240 }, (_, i) => `burst${i}`);
    for (const handle of burstUsers) {
      await auth.addUser(handle, [1]);
      tokens[handle] = await auth.issueToken(handle);
    }
    const streams: SseStream[] = [await stream('alice')];
    // When a check ran: the stream of a revoked token ends then; the next runs a second later.
    const sentinel = await auth.issueToken('u8');
    const watched = await openSse(base, '/api/v1/events', sentinel.token);
    await auth.revokeToken(sentinel.id);
    await watched.ended;
    await new Promise((r) => setTimeout(r, 900));
    const waiting = [...burstUsers];
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        for (let who = waiting.shift(); who !== undefined; who = waiting.shift()) streams.push(await stream(who));
      }),
    );
    expect(streams.map((s) => s.status).filter((status) => status !== 200)).toEqual([]);
    const endedEarly = new Set<SseStream>();
    for (const s of streams) void s.ended.then(() => endedEarly.add(s));

    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push(await create('bob', '/api/v1/sessions', session(`many ${i}`, true)));
    const last = ids.at(-1);
    await Promise.all(streams.map((s) => s.waitFor((e) => e.event === 'change' && data(e).id === last, 10_000).catch(() => undefined)));
    const missing = streams.filter((s) => s.events.filter((e) => e.event === 'change').map((e) => data(e).id).join() !== ids.join());
    expect({ ended: endedEarly.size, missing: missing.length }).toEqual({ ended: 0, missing: 0 });
    for (const s of streams) s.close();
    await new Promise((r) => setTimeout(r, 100));
  });

  it('sends a comment line when nothing else was sent for the heartbeat interval, past every request deadline', async () => {
    const quiet = await stream('carol');
    let ended = false;
    void quiet.ended.then(() => (ended = true));
    // Server and client share this process, so a pause of the process (a CI run with other
    // suites on the machine saw a 910 ms gap) delays a comment's arrival as much: the bound
    // allows the longest pause measured while the stream was watched, and no more.
    const pauses = monitorEventLoopDelay({ resolution: 10 });
    pauses.enable();
    await new Promise((r) => setTimeout(r, 2 * DEADLINE_MS + HEARTBEAT_MS * 2));
    pauses.disable();
    expect(ended).toBe(false);
    expect(quiet.comments.length).toBeGreaterThanOrEqual(4);
    const gaps = quiet.comments.slice(1).map((c, i) => c.at - (quiet.comments[i]?.at ?? 0));
    expect(Math.max(...gaps)).toBeLessThan(HEARTBEAT_MS * 2 + pauses.max / 1e6);
    // At least every HEARTBEAT_MS: the hub looks every 50 ms (EVENTS_POLL_MS) and sends when a
    // comment would be late at its next look, so a typical gap is under the interval, not over it.
    const median = [...gaps].sort((a, b) => a - b)[Math.floor(gaps.length / 2)] ?? 0;
    expect(median).toBeLessThan(HEARTBEAT_MS);
    quiet.close();
  });

  // PostgreSQL answers the hub asynchronously, so a lock can hold its tick while the loop runs
  // (SQLite's statements run on the loop itself: nothing else runs while one waits).
  it.skipIf(dialect !== 'postgres')('keeps sending comment lines while the hub waits for the database', async () => {
    const quiet = await stream('carol');
    // In step with the hub, its first comment sent.
    await new Promise((r) => setTimeout(r, HEARTBEAT_MS * 2));
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      await admin.query('begin');
      // Every read of the change log (the hub's head, first) now waits for this transaction.
      await admin.query('lock table changes in access exclusive mode');
      const lockedAt = Date.now();
      await new Promise((r) => setTimeout(r, 2_000));
      const during = quiet.comments.filter((c) => c.at > lockedAt + HEARTBEAT_MS).length;
      expect(during).toBeGreaterThanOrEqual(3);
    } finally {
      await admin.query('rollback');
      await admin.end();
    }
    quiet.close();
  });

  it('resumes after a dropped connection with exactly the events missed', async () => {
    const first = await stream('u1');
    const sessionId = await create('u1', '/api/v1/sessions', session('resume', false));
    const created = await first.waitFor((e) => e.event === 'change' && data(e).id === sessionId);
    first.close();
    const missed: string[] = [];
    for (let i = 0; i < 3; i++) {
      missed.push(await create('u1', '/api/v1/tasks', { context: `missed ${i}`, session_id: Number(sessionId) }));
    }
    await new Promise((r) => setTimeout(r, 500));
    for (const resumed of [await stream('u1', '/api/v1/events', { 'last-event-id': created.id ?? '' }), await stream('u1', `/api/v1/events?cursor=${created.id ?? ''}`)]) {
      await resumed.waitFor((e) => e.event === 'change' && data(e).id === missed[2]);
      expect(resumed.events.filter((e) => e.event === 'change').map((e) => `${data(e).type}:${data(e).id}`)).toEqual(missed.map((id) => `task:${id}`));
      resumed.close();
    }
  });

  it('announces session.started and session.ended to those involved, from the occurrence index', async () => {
    const [alice, bob] = [await stream('alice'), await stream('bob')];
    const created = Number(await create('alice', '/api/v1/sessions', session('soon', true)));
    // The session's minutes moved to the next seconds, so that the test need not wait for a minute boundary.
    const startsAt = new Date(Date.now() + 1_000).toISOString();
    const endsAt = new Date(Date.now() + 2_000).toISOString();
    await storage.db.updateTable('session_occurrences').set({ starts_at: startsAt, ends_at: endsAt }).where('session_id', '=', created).execute();
    const started = await alice.waitFor((e) => e.event === 'session.started', 5_000);
    expect(JSON.parse(started.data)).toEqual({ session_id: created, occurrence_date: '2026-05-01', starts_at: startsAt, ends_at: endsAt });
    expect(started.at).toBeGreaterThanOrEqual(Date.parse(startsAt));
    const ended = await alice.waitFor((e) => e.event === 'session.ended', 5_000);
    expect(JSON.parse(ended.data)).toEqual(JSON.parse(started.data));
    // Bob sees the public session but is not involved in it.
    expect(bob.events.filter((e) => e.event.startsWith('session.'))).toEqual([]);
    alice.close();
    bob.close();
  });

  it('announces session.starting at each reminder with minutes_before: the session’s own for all involved, else each person’s own', async () => {
    expect((await call('alice', 'PUT', '/api/v1/me', { timezone: 'UTC', reminders: [2] })).status).toBe(200);
    const [alice, bob] = [await stream('alice'), await stream('bob')];
    const own = Number(await create('alice', '/api/v1/sessions', { ...session('own reminders', true), reminders: [1] }));
    const home = Number(await create('alice', '/api/v1/sessions', session('home reminders', true)));
    for (const id of [own, home]) expect((await call('bob', 'POST', `/api/v1/sessions/${id}/join`)).status).toBe(200);
    // Moved in the index so that each reminder falls a second or two from now: no wait for a minute boundary.
    const soon = Date.now();
    const move = async (id: number, startsInMs: number) => {
      const startsAt = new Date(soon + startsInMs).toISOString();
      await storage.db.updateTable('session_occurrences').set({ starts_at: startsAt, ends_at: new Date(soon + startsInMs + 600_000).toISOString() }).where('session_id', '=', id).execute();
      return startsAt;
    };
    const ownStarts = await move(own, 60_000 + 1_000);
    const homeStarts = await move(home, 120_000 + 1_500);
    const starting = (s: SseStream, id: number) => s.waitFor((e) => e.event === 'session.starting' && (JSON.parse(e.data) as { session_id: number }).session_id === id, 6_000);
    const a1 = await starting(alice, own);
    expect(JSON.parse(a1.data)).toEqual({ session_id: own, occurrence_date: '2026-05-01', starts_at: ownStarts, ends_at: expect.any(String), minutes_before: 1 });
    expect(a1.at - (Date.parse(ownStarts) - 60_000)).toBeGreaterThanOrEqual(0);
    expect(a1.at - (Date.parse(ownStarts) - 60_000)).toBeLessThan(5_000);
    expect(JSON.parse((await starting(bob, own)).data)).toMatchObject({ session_id: own, minutes_before: 1 });
    // The session without its own: alice's home [2]; bob's home [5] fell before the move, so nothing for him.
    const a2 = await starting(alice, home);
    expect(JSON.parse(a2.data)).toMatchObject({ session_id: home, starts_at: homeStarts, minutes_before: 2 });
    await new Promise((r) => setTimeout(r, 500));
    expect(alice.events.filter((e) => e.event === 'session.starting')).toHaveLength(2);
    expect(bob.events.filter((e) => e.event === 'session.starting')).toHaveLength(1);
    expect((await call('alice', 'PUT', '/api/v1/me', { timezone: 'UTC', reminders: [5] })).status).toBe(200);
    alice.close();
    bob.close();
  });

  it('announces an occurrence of a series to those who joined that occurrence, and not another', async () => {
    const [alice, bob] = [await stream('alice'), await stream('bob')];
    const id = Number(await create('alice', '/api/v1/sessions', { ...session('daily', true), is_recurring: 1, occurrence: 'daily', recurring_ends: '2026-05-03' }));
    const joined = await call('bob', 'POST', `/api/v1/sessions/${id}/join?date=2026-05-02`);
    expect(joined.status, JSON.stringify(joined.body)).toBe(200);
    const at = (ms: number) => new Date(Date.now() + ms).toISOString();
    for (const [date, startsIn] of [['2026-05-01', 1_000], ['2026-05-02', 1_500]] as const) {
      await storage.db.updateTable('session_occurrences').set({ starts_at: at(startsIn), ends_at: at(startsIn + 500) }).where('session_id', '=', id).where('occurrence_date', '=', date).execute();
    }
    const dated = (e: { event: string; data: string }) => `${e.event} ${(JSON.parse(e.data) as { occurrence_date: string }).occurrence_date}`;
    await alice.waitFor((e) => dated(e) === 'session.ended 2026-05-02', 5_000);
    await bob.waitFor((e) => dated(e) === 'session.ended 2026-05-02', 5_000);
    // Alice hosts every occurrence; Bob joined only the second.
    expect(alice.events.filter((e) => e.event.startsWith('session.')).map(dated)).toEqual([
      'session.started 2026-05-01', 'session.ended 2026-05-01', 'session.started 2026-05-02', 'session.ended 2026-05-02',
    ]);
    expect(bob.events.filter((e) => e.event.startsWith('session.')).map(dated)).toEqual(['session.started 2026-05-02', 'session.ended 2026-05-02']);
    alice.close();
    bob.close();
  });

  it('refuses a stream beyond the per-token limit with 429 too-many-streams', async () => {
    const [a, b] = [await stream('u0'), await stream('u0')];
    const refused = await stream('u0');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect((refused.body as { type: string }).type).toMatch(/^http:\/\/[^/]+\/problems\/too-many-streams$/);
    a.close();
    // The slot comes back once the server sees the connection close: on a loaded machine that can take longer than 100 ms.
    let again = await stream('u0');
    for (let i = 0; i < 20 && again.status === 429; i++) {
      await new Promise((r) => setTimeout(r, 100));
      again = await stream('u0');
    }
    expect(again.status).toBe(200);
    again.close();
    b.close();
    await new Promise((r) => setTimeout(r, 100));
  });

  it('answers HEAD with the headers of a stream, at once, and without taking a stream slot', async () => {
    for (let i = 0; i < 3; i++) {
      const head = await fetch(`${base}/api/v1/events`, { method: 'HEAD', headers: { authorization: `Bearer ${tokens.u1?.token ?? ''}` }, signal: AbortSignal.timeout(5_000) });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    }
    // The per-token limit is 2: both streams still open.
    const [a, b] = [await stream('u1'), await stream('u1')];
    expect([a.status, b.status]).toEqual([200, 200]);
    a.close();
    b.close();
    await new Promise((r) => setTimeout(r, 100));
  });

  it('refuses bad cursors and an unfinished full sync’s cursor', async () => {
    expect((await stream('alice', '/api/v1/events?cursor=nope')).status).toBe(422);
    const sync = (await call('alice', 'GET', '/api/v1/changes?limit=1')).body as { next_cursor: string };
    expect((await stream('alice', '/api/v1/events', { 'last-event-id': sync.next_cursor })).status).toBe(422);
    expect((await openSse(base, '/api/v1/events', 'fst_nope')).status).toBe(401);
  });

  it('holds no concurrency-gate slot: other requests are served with many streams open', async () => {
    const many = await Promise.all(Array.from({ length: 20 }, (_, i) => stream(`u${10 + i}`)));
    expect(many.every((s) => s.status === 200)).toBe(true);
    expect((await call('alice', 'GET', '/api/v1/me')).status).toBe(200);
    for (const s of many) s.close();
  });

  it('ends a stream once its token is revoked', async () => {
    const s = await stream('u9');
    await createAuthService(storage).revokeToken(tokens.u9?.id ?? 0);
    const closed = await Promise.race([s.ended.then(() => true), new Promise((r) => setTimeout(() => r(false), 3_000))]);
    expect(closed).toBe(true);
  });

  it('ends every stream when the server closes, well within the drain deadline', async () => {
    // A server of its own, so that only its streams are open when it closes.
    const own = await buildApp({ config: testConfig(database.url), storage, logger: false });
    const ownBase = await own.listen({ port: 0, host: '127.0.0.1' });
    const streams = await Promise.all(['alice', 'bob', 'u2'].map((who) => openSse(ownBase, '/api/v1/events', tokens[who]?.token ?? '')));
    expect(streams.map((s) => s.status)).toEqual([200, 200, 200]);
    const started = Date.now();
    await own.close();
    await Promise.all(streams.map((s) => s.ended));
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
