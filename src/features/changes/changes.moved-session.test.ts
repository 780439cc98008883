import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestDatabase, createTestDatabase, describeEachDialect, testConfig } from '../../../test/helpers/harness.js';
import { http } from '../../../test/helpers/http.js';
import { type SseStream, openSse } from '../../../test/helpers/sse.js';
import { Receiver } from '../../../test/helpers/webhook-receiver.js';
import { buildApp } from '../../app/app.js';
import { startJobs } from '../../server.jobs.js';
import { type Storage, openStorage } from '../../storage/database.js';
import { createAuthService } from '../auth/auth.service.js';

/*
 * Contract section 13 (issue 34, L2): a session moved to another org and made private is
 * announced as deleted only to those who could see it before (members of the org it
 * left), never to members of the new org who never saw it: on the event stream, the
 * change feed and webhooks alike.
 */

interface Entry {
  type: string;
  id: string;
  deleted: boolean;
}
const session = (name: string, isPublic: boolean, orgId: number) => ({ org_id: orgId, name, type: 'standard', duration: 30, schedule: '2027-05-01', time: '9:00 AM', is_public: isPublic });
const EVENTS = ['session.created', 'session.updated', 'session.deleted'];

describeEachDialect('a session moved to another org', (dialect) => {
  let database: TestDatabase;
  let storage: Storage;
  let app: FastifyInstance;
  let base = '';
  const tokens: Record<string, string> = {};
  const receivers: Record<string, Receiver> = {};
  const opened: SseStream[] = [];
  // host: both orgs; old: the org the session leaves; newbie: the org it moves to, never saw it.
  const USERS = [['host', [1, 2]], ['old', [1]], ['newbie', [2]]] as const;

  const call = (who: string, method: string, path: string, body?: unknown) => http(base, method, path, tokens[who], body);
  const create = async (who: string, body: unknown): Promise<string> => {
    const res = await call(who, 'POST', '/api/v1/sessions', body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return String((res.body as { data: { id: number } }).data.id);
  };
  /** The log-phase cursor of a user's feed now. */
  const feedCursor = async (who: string): Promise<string> => {
    let cursor = '';
    for (let n = 0; n < 20; n++) {
      const res = await call(who, 'GET', `/api/v1/changes?limit=500${cursor === '' ? '' : `&cursor=${cursor}`}`);
      const page = res.body as { data: Entry[]; next_cursor: string };
      cursor = page.next_cursor;
      if (page.data.length === 0) return cursor;
    }
    throw new Error('feed did not end');
  };

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    storage = openStorage({ databaseUrl: database.url });
    app = await buildApp({ config: testConfig(database.url, { EVENTS_POLL_MS: '50', WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_SCALE: '0.001' }), storage, logger: false });
    startJobs(app, { allowPrivate: true, retryScale: 0.001 });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    const auth = createAuthService(storage);
    for (const [handle, orgs] of USERS) {
      await auth.addUser(handle, [...orgs]);
      tokens[handle] = (await auth.issueToken(handle)).token;
    }
  });
  afterAll(async () => {
    for (const s of opened) s.close();
    await app.close();
    for (const r of Object.values(receivers)) await r.stop();
    await storage.close();
    await database.drop();
  });

  it('is told deleted to a member of the org it left, and to nobody of the org it moved to, on every channel', async () => {
    const moved = await create('host', session('public in org 1', true, 1));
    for (const [who] of USERS) {
      receivers[who] = await new Receiver().start();
      const hook = await call(who, 'POST', '/api/v1/webhooks', { url: receivers[who].url, events: EVENTS });
      expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    }
    const cursors = Object.fromEntries(await Promise.all(USERS.map(async ([who]) => [who, await feedCursor(who)] as const)));
    const streams = Object.fromEntries(
      await Promise.all(
        USERS.map(async ([who]) => {
          const s = await openSse(base, `/api/v1/events?cursor=${cursors[who]}`, tokens[who] as string);
          opened.push(s);
          expect(s.status).toBe(200);
          return [who, s] as const;
        }),
      ),
    );
    await new Promise((r) => setTimeout(r, 200));

    const res = await call('host', 'PUT', `/api/v1/sessions/${moved}`, { org_id: 2, is_public: false });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // Markers after the move, one per org: once a channel told them, it told the move too.
    const markers = { 1: await create('host', session('marker 1', true, 1)), 2: await create('host', session('marker 2', true, 2)) };
    const markerOf = (who: string) => (who === 'newbie' ? markers[2] : markers[1]);

    const told: Record<string, Record<string, Entry[]>> = {};
    for (const [who] of USERS) {
      const stream = streams[who] as SseStream;
      await stream.waitFor((e) => e.event === 'change' && (JSON.parse(e.data) as Entry).id === markerOf(who), 10_000);
      const receiver = receivers[who] as Receiver;
      await receiver.until((received) => received.some((r) => r.body.includes(`"id":${markerOf(who)}`)), 15_000, `${who}'s marker`);
      const feed = await call(who, 'GET', `/api/v1/changes?limit=500&cursor=${cursors[who]}`);
      told[who] = {
        stream: stream.events.filter((e) => e.event === 'change').map((e) => JSON.parse(e.data) as Entry).filter((e) => e.id === moved),
        feed: (feed.body as { data: Entry[] }).data.filter((e) => e.id === moved),
        webhook: receiver.payloads().filter((b) => String(b.data.id) === moved).map((b) => ({ type: b.type, id: moved, deleted: b.type === 'session.deleted' })),
      };
    }
    for (const channel of ['stream', 'feed', 'webhook']) {
      // The new org's member never saw it and does not see it now: not a word.
      expect(told.newbie?.[channel], `newbie, ${channel}`).toEqual([]);
      // The old org's member saw it: told it is gone.
      expect(told.old?.[channel]?.some((e) => e.deleted), `old, ${channel}: ${JSON.stringify(told.old?.[channel])}`).toBe(true);
      // Its creator still sees it: never told it is gone.
      expect(told.host?.[channel]?.some((e) => e.deleted), `host, ${channel}`).toBe(false);
    }
  }, 60_000);
});
