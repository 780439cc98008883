import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestDatabase, createTestDatabase, describeEachDialect, testConfig } from '../../../test/helpers/harness.js';
import { http } from '../../../test/helpers/http.js';
import { type SseStream, openSse } from '../../../test/helpers/sse.js';
import { buildApp } from '../../app/app.js';
import { startJobs } from '../../server.jobs.js';
import { type Storage, openStorage } from '../../storage/database.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { createAuthService } from '../auth/auth.service.js';
import { sessionsApi } from '../sessions/sessions.api.js';

/*
 * The hub reads the records of a tick's changes once for every stream in step with it
 * and tells each user's apart in memory; GET /changes reads them per user in SQL. Both
 * must tell each user the same: this suite makes changes every kind of user sees
 * differently while many streams follow, then holds each stream against the feed.
 */

interface Entry {
  type: 'session' | 'task';
  id: string;
  deleted: boolean;
  record: unknown;
  changed_at: string;
}

const ORG_ONE = ['host', 'collab', 'joiner', 'watcher', ...Array.from({ length: 24 }, (_, i) => `member${i}`)];
const session = (name: string, isPublic: boolean, orgId = 1) => ({
  org_id: orgId, name, type: 'standard', duration: 30, schedule: '2026-05-01', time: '9:00 AM', is_public: isPublic,
});
/** The cursor's second field is the phase: 2 once a full sync is over and the log follows. */
const following = (cursor: string) => (JSON.parse(Buffer.from(cursor, 'base64url').toString()) as unknown[])[1] === 2;

describeEachDialect('GET /events, many users at once', (dialect) => {
  let database: TestDatabase;
  let storage: Storage;
  let app: FastifyInstance;
  let base = '';
  const tokens: Record<string, string> = {};
  const opened: SseStream[] = [];

  const call = (who: string, method: string, path: string, body?: unknown) => http(base, method, path, tokens[who], body);
  const create = async (who: string, path: string, body: unknown): Promise<string> => {
    const res = await call(who, 'POST', path, body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return String((res.body as { data: { id: number | string } }).data.id);
  };
  /** Every page of the feed from `cursor` (a full sync without one) until it is empty in the log phase. */
  const feed = async (who: string, cursor?: string): Promise<{ entries: Entry[]; cursor: string }> => {
    const entries: Entry[] = [];
    let next = cursor;
    for (let n = 0; n < 50; n++) {
      const res = await call(who, 'GET', `/api/v1/changes?limit=500${next === undefined ? '' : `&cursor=${next}`}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const page = res.body as { data: Entry[]; next_cursor: string };
      entries.push(...page.data);
      next = page.next_cursor;
      if (following(next) && page.data.length === 0) return { entries, cursor: next };
    }
    throw new Error(`the feed of ${who} did not end`);
  };
  /** Each record's last state: a stream may tell a record twice (two ticks), the feed once. */
  const lastStates = (entries: readonly Entry[]) =>
    Object.fromEntries(entries.map((e) => [`${e.type}:${e.id}`, { deleted: e.deleted, record: e.record, changed_at: e.changed_at }]));

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    storage = openStorage({ databaseUrl: database.url });
    const env = { EVENTS_POLL_MS: '50', EVENTS_STREAMS_PER_TOKEN: '2' };
    app = await buildApp({ config: testConfig(database.url, env), storage, logger: false });
    startJobs(app);
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    const auth = createAuthService(storage);
    for (const [handle, orgs] of [...ORG_ONE.map((h) => [h, [1]]), ['outsider', [2]], ['both', [1, 2]]] as [string, number[]][]) {
      await auth.addUser(handle, orgs);
      tokens[handle] = (await auth.issueToken(handle)).token;
    }
  });

  afterAll(async () => {
    for (const s of opened) s.close();
    await app.close();
    await storage.close();
    await database.drop();
  });

  it('tells every user, from one read for all their streams, exactly what GET /changes tells that user', async () => {
    // Ahead of today, so that its next occurrence (the one its record counts) is the one joined.
    const daily = { ...session('daily', true), schedule: '2027-05-01', is_recurring: 1, occurrence: 'daily', recurring_ends: '2027-05-05' };
    const series = await create('host', '/api/v1/sessions', daily);
    const goesPrivate = await create('host', '/api/v1/sessions', session('seen, then private', true));
    const goesAway = await create('host', '/api/v1/sessions', session('seen, then deleted', true));
    const watcherJoined = await call('watcher', 'POST', `/api/v1/sessions/${goesPrivate}/join`);
    expect(watcherJoined.status).toBe(200);
    const quietOnes = await create('host', '/api/v1/sessions', session('seen, then private, by nobody involved', true));

    const users = Object.keys(tokens);
    const cursors = Object.fromEntries(await Promise.all(users.map(async (u) => [u, (await feed(u)).cursor] as const)));
    const streams = Object.fromEntries(
      await Promise.all(
        users.map(async (u) => {
          const s = await openSse(base, `/api/v1/events?cursor=${cursors[u] ?? ''}`, tokens[u] ?? '');
          opened.push(s);
          expect(s.status).toBe(200);
          return [u, s] as const;
        }),
      ),
    );
    // A few ticks: every stream is in step with the hub before the changes.
    await new Promise((r) => setTimeout(r, 300));

    const hidden = await create('host', '/api/v1/sessions', { ...session('private, with a collaborator', false), collaborator: ['collab'] });
    const joined = await call('joiner', 'POST', `/api/v1/sessions/${series}/join?date=2027-05-01`);
    expect(joined.status, JSON.stringify(joined.body)).toBe(200);
    for (const id of [goesPrivate, quietOnes]) expect((await call('host', 'PUT', `/api/v1/sessions/${id}`, { is_public: false })).status).toBe(200);
    expect((await call('host', 'DELETE', `/api/v1/sessions/${goesAway}`)).status).toBe(204);
    await create('joiner', '/api/v1/tasks', { context: 'joiner’s task', session_id: Number(series) });
    await create('host', '/api/v1/tasks', { context: 'host’s task', session_id: Number(hidden) });
    await create('outsider', '/api/v1/sessions', session('org 2, public', true, 2));
    await create('both', '/api/v1/sessions', session('org 2, private', false, 2));
    const markers = [await create('host', '/api/v1/sessions', session('marker 1', true)), await create('outsider', '/api/v1/sessions', session('marker 2', true, 2))];

    const changeIds = (s: SseStream) => s.events.filter((e) => e.event === 'change').map((e) => JSON.parse(e.data) as Entry).filter((e) => e.type === 'session').map((e) => e.id);
    for (const [u, s] of Object.entries(streams)) {
      const marker = u === 'outsider' ? markers[1] : markers[0];
      await s.waitFor((e) => e.event === 'change' && (JSON.parse(e.data) as Entry).id === marker, 10_000);
      if (u === 'both') await s.waitFor((e) => e.event === 'change' && (JSON.parse(e.data) as Entry).id === markers[1], 10_000);
    }
    // Nothing more is on its way: the last marker is out, and a tick more has passed.
    await new Promise((r) => setTimeout(r, 200));

    for (const u of users) {
      const stream = streams[u] as SseStream;
      const sent = stream.events.filter((e) => e.event === 'change').map((e) => JSON.parse(e.data) as Entry);
      const listed = await feed(u, cursors[u]);
      expect(lastStates(sent), u).toEqual(lastStates(listed.entries));
    }
    // And what that means, for a few of them.
    expect(changeIds(streams.collab as SseStream)).toContain(hidden);
    expect(changeIds(streams.watcher as SseStream)).not.toContain(hidden);
    const watcherSaw = (streams.watcher as SseStream).events.filter((e) => e.event === 'change').map((e) => JSON.parse(e.data) as Entry);
    // The watcher joined it, so keeps it, private; a member never involved is told it is gone.
    expect(watcherSaw.filter((e) => e.id === goesPrivate).at(-1)?.deleted).toBe(false);
    expect((streams.member0 as SseStream).events.map((e) => e.data).some((d) => (JSON.parse(d) as Entry).id === goesPrivate && (JSON.parse(d) as Entry).deleted)).toBe(true);
    expect(watcherSaw.filter((e) => e.id === goesAway).at(-1)?.deleted).toBe(true);
    expect(changeIds(streams.outsider as SseStream).filter((id) => [series, hidden, goesAway, markers[0]].includes(id))).toEqual([]);
    const seriesTo = (u: string) => (streams[u] as SseStream).events.map((e) => JSON.parse(e.data) as Entry).filter((e) => e.type === 'session' && e.id === series).at(-1)?.record;
    expect(seriesTo('joiner')).toMatchObject({ participants_count: 2, participation: { joined: true, role: 'participant' } });
    expect(seriesTo('watcher')).toMatchObject({ participants_count: 2, participation: { joined: false, role: null } });
    for (const s of Object.values(streams)) s.close();
  });

  it('reads, for many readers at once, the very records each reads alone, whatever ids it is asked for', async () => {
    const series = await create('host', '/api/v1/sessions', { ...session('series', true), schedule: '2027-06-01', is_recurring: 1, occurrence: 'daily', recurring_ends: '2027-06-03' });
    expect((await call('member1', 'POST', `/api/v1/sessions/${series}/join?date=2027-06-01`)).status).toBe(200);
    await create('host', '/api/v1/sessions', { ...session('private, one collaborator', false), collaborator: ['collab'] });
    const joinedThenPrivate = await create('host', '/api/v1/sessions', session('joined, then private', true));
    expect((await call('member2', 'POST', `/api/v1/sessions/${joinedThenPrivate}/join`)).status).toBe(200);
    expect((await call('host', 'PUT', `/api/v1/sessions/${joinedThenPrivate}`, { is_public: false })).status).toBe(200);
    await create('both', '/api/v1/sessions', session('org 2, private to both', false, 2));
    await create('outsider', '/api/v1/sessions', session('org 2, public', true, 2));
    const sessions = sessionsApi(storage);
    const auth = createAuthService(storage);
    const readers = await Promise.all(Object.values(tokens).map(async (token) => (await auth.authenticate(token)) as AuthenticatedUser));
    const ids = (await storage.db.selectFrom('sessions').select('id').execute()).map((r) => r.id);
    const together = await sessions.visibleRecordsForReaders(readers, [...ids, 9_999_999]);
    const alone = await Promise.all(readers.map((reader) => sessions.visibleRecords(reader, [...ids, 9_999_999])));
    expect(together.map((records) => Object.fromEntries(records))).toEqual(alone.map((records) => Object.fromEntries(records)));
    // Not everyone sees everything, nor nothing.
    const sizes = together.map((records) => records.size);
    expect(Math.min(...sizes)).toBeGreaterThan(0);
    expect(Math.min(...sizes)).toBeLessThan(Math.max(...sizes));
  });
});
