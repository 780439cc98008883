import { Agent, get } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthService } from '../../src/features/auth/auth.service.js';
import { openStorage } from '../../src/storage/database.js';
import { parseFeed } from '../../src/features/calendar/calendar.test-helpers.js';
import { DIALECTS, type TestDatabase, createTestDatabase } from '../helpers/harness.js';
import { percentile, seedUsers, sleep } from '../helpers/raw-http.js';
import { type ServerProcess, buildOnce, startServer } from '../helpers/server-process.js';

/*
 * Issue 34, H1: one anonymous fetch of a feed holding sessions in 418 zones dated 1996
 * blocked the whole instance for 28 s (each VTIMEZONE stepped a day at a time over 30
 * years on the event loop), 6.4 s again after 100 PUTs, and two fetchers of the cached
 * feed still pushed others' p50 to 0.5–1.2 s. Contract section 13: a feed never delays
 * other requests by more than 100 ms, and is answered within the request-cost bound.
 * Here a fresh server (no zone computed yet) serves such a feed while another user's
 * requests are timed; the bounds leave headroom for a loaded machine (the old code took
 * seconds per request): another user's p50 may exceed its own p50 without any feed by
 * 100 ms at most, and no request of theirs may wait a second. The feed's own first fetch
 * is timed by the server (its "request completed" log line): every zone is computed by a
 * worker thread as the server starts, so the first fetch only writes text (the old code
 * spent 8–14 s computing zones on it). With no rate limit at all, two fetchers of the
 * unchanged 1.2 MB feed cost the server no hashing or encoding per fetch (old code:
 * others' p50 140–170 ms).
 */

beforeAll(buildOnce, 180_000);

const ZONES = Intl.supportedValuesOf('timeZone');
/** Another user's request slower than this counts as this long: the old code held them for tens of seconds. */
const VICTIM_TIMEOUT_MS = 5_000;
/** Requests per minute per token and per feed: small, so that two fetchers reach the feed's own limit within a second or two. */
const RATE_LIMIT = 30;

/**
 * The first fetch's server time may not exceed this: the request-cost bound (200 ms) with room for a loaded machine
 * (600 ms was missed once, at 633, beside other slow suites); the old code took 8–14 s.
 */
const FIRST_FETCH_SERVER_MS = 1_000;

for (const dialect of DIALECTS) {
  describe(`a calendar feed of ${ZONES.length} zones dated 1996 [${dialect}]`, () => {
    let database: TestDatabase;
    let server: ServerProcess;
    let feedUrl: string;
    const ids: number[] = [];
    /** The victim's p50 with no feed fetched: the machine's own load, which the bounds add to. */
    let baseline = 0;
    const mallory: string[] = [];
    const victim: string[] = [];
    let victimCalls = 0;
    let otherFeedUrl: string;
    /** One of Mallory's tokens, in turn. */
    const malloryToken = () => mallory[ids.length % mallory.length] as string;

    const api = (token: string, method: string, path: string, body?: unknown, timeoutMs = 30_000, at = server) =>
      fetch(`${at.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });

    /** Times the victim's requests, one after another, until `until` settles. */
    async function victimWhile(until: Promise<unknown>, at = server): Promise<number[]> {
      let done = false;
      void until.finally(() => (done = true)).catch(() => undefined);
      const samples: number[] = [];
      while (!done || samples.length < 5) {
        const started = performance.now();
        try {
          const res = await api(victim[victimCalls++ % victim.length] as string, 'GET', '/api/v1/sessions?limit=20', undefined, VICTIM_TIMEOUT_MS, at);
          expect(res.status).toBe(200);
          await res.arrayBuffer();
          samples.push(performance.now() - started);
        } catch {
          samples.push(VICTIM_TIMEOUT_MS);
        }
        await sleep(30);
      }
      return samples;
    }

    const fetchFeed = async (timeoutMs = 120_000, url = feedUrl, from = server) => {
      const started = performance.now();
      const res = await fetch(`${from.url}${url}`, { signal: AbortSignal.timeout(timeoutMs) });
      const text = await res.text();
      return { status: res.status, text, ms: performance.now() - started };
    };

    /** The server's own time for its first feed request logged after line `from` (Fastify's responseTime, ms). */
    const serverTimeOfFeed = (from: number) => {
      const lines = server.logs().slice(from);
      const incoming = lines.find((line) => line.msg === 'incoming request' && String((line.req as { url?: string } | undefined)?.url).startsWith('/ical/'));
      const done = lines.find((line) => line.msg === 'request completed' && line.reqId === incoming?.reqId);
      return Number(done?.responseTime ?? NaN);
    };

    /** Two fetchers of the feed at `at`, each fetching again as soon as it has read the last, while the victim is timed there for 4 s. */
    async function twoFetchers(at: ServerProcess, quiet: number) {
      let stop = false;
      const fetched: number[] = [];
      let limited = 0;
      const agent = new Agent({ keepAlive: true });
      // Bodies read and dropped by node:http: the test's own event loop, which times the victim, stays nearly idle.
      const fetchOnce = () =>
        new Promise<number>((done, fail) => get(`${at.url}${feedUrl}`, { agent, timeout: 30_000 }, (res) => res.resume().on('end', () => done(res.statusCode ?? 0))).on('error', fail));
      const fetcher = async () => {
        while (!stop) {
          const started = performance.now();
          const status = await fetchOnce();
          if (status === 429) limited += 1;
          else fetched.push(performance.now() - started);
        }
      };
      const fetchers = Promise.all([fetcher(), fetcher()]);
      const during = await victimWhile(sleep(4_000), at);
      stop = true;
      await fetchers;
      agent.destroy();
      const report = `baseline p50 ${Math.round(quiet)} ms; victim p50 ${Math.round(percentile(during, 0.5))} ms, max ${Math.round(Math.max(...during))} ms over ${during.length}; feed p50 ${Math.round(percentile(fetched, 0.5))} ms over ${fetched.length}`;
      return { during, fetched, limited, report };
    }

    beforeAll(async () => {
      database = await createTestDatabase(dialect);
      await seedUsers(database.url, ['mallory', 'victim']);
      // A small budget per token and per feed, so that hammering runs into the feed's own; set-up and the victim use several tokens.
      const storage = openStorage({ databaseUrl: database.url });
      for (let i = 0; i < 40; i++) mallory.push((await createAuthService(storage).issueToken('mallory')).token);
      for (let i = 0; i < 80; i++) victim.push((await createAuthService(storage).issueToken('victim')).token);
      await storage.close();
      server = await startServer({ DATABASE_URL: database.url, RATE_LIMIT: String(RATE_LIMIT) });
      // One session per zone, on a day of a year from 1996 on, in every month (summer and winter times alike).
      for (let i = 0; i < ZONES.length; i += 8) {
        const batch = ZONES.slice(i, i + 8).map((timezone, j) => {
          const n = i + j;
          const schedule = `${1996 + (n % 30)}-${String((n % 12) + 1).padStart(2, '0')}-10`;
          return api(mallory[n % mallory.length] as string, 'POST', '/api/v1/sessions', { org_id: 1, name: `z${n}`, type: 'standard', duration: 30, schedule, time: '9:00 AM', timezone });
        });
        for (const res of await Promise.all(batch)) {
          expect(res.status).toBe(201);
          ids.push(((await res.json()) as { data: { id: number } }).data.id);
        }
      }
      for (let i = 0; i < 3; i++) await api(victim[i] as string, 'POST', '/api/v1/sessions', { org_id: 1, name: `v${i}`, type: 'standard', duration: 30, schedule: '2026-12-01', time: '9:00 AM' });
      const feed = await api(malloryToken(), 'POST', '/api/v1/calendar-feeds', {});
      feedUrl = ((await feed.json()) as { data: { url: string } }).data.url;
      const other = await api(malloryToken(), 'POST', '/api/v1/calendar-feeds', {});
      otherFeedUrl = ((await other.json()) as { data: { url: string } }).data.url;
      baseline = percentile(await victimWhile(sleep(2_000)), 0.5);
    }, 300_000);

    afterAll(async () => {
      await server?.stop('SIGKILL');
      await database?.drop();
    });

    it('answers the first fetch on a fresh server within the request-cost bound, without holding another user', async () => {
      // The zones are computed off the event loop while the server starts (and the sessions are stored).
      const warmed = await server.waitForLog((line) => line.msg === 'time-zone definitions computed', 'the zones worker', 120_000);
      const logged = server.logs().length;
      const cold = fetchFeed();
      const during = await victimWhile(cold);
      const first = await cold;
      expect(first.status).toBe(200);
      const serverMs = serverTimeOfFeed(logged);
      const victim =
        `zones worker ${String(warmed.ms)} ms for ${String(warmed.zones)} zones; baseline p50 ${Math.round(baseline)} ms; victim p50 ${Math.round(percentile(during, 0.5))} ms, ` +
        `max ${Math.round(Math.max(...during))} ms over ${during.length}; first feed ${Math.round(first.ms)} ms, ${Math.round(serverMs)} ms of server time`;
      expect(serverMs, victim).toBeLessThan(FIRST_FETCH_SERVER_MS);
      expect(percentile(during, 0.5), victim).toBeLessThan(baseline + 100);
      expect(Math.max(...during), victim).toBeLessThan(1_000);
      expect(first.text.match(/BEGIN:VTIMEZONE/g)?.length, 'a VTIMEZONE per zone but UTC').toBeGreaterThanOrEqual(ZONES.length - 2);

      // Computed once per zone and process: later fetches only assemble text.
      const warm: number[] = [];
      for (let i = 0; i < 3; i++) warm.push((await fetchFeed()).ms);
      expect(percentile(warm, 0.5), `warm feed fetches: ${warm.map(Math.round).join(', ')} ms`).toBeLessThan(1_000);
    }, 300_000);

    it('stays cheap after 100 PUTs move sessions to other years, with two fetchers hammering it up to its own rate limit', async () => {
      for (let i = 0; i < 100; i += 10) {
        const puts = ids.slice(i, i + 10).map((id, j) => api(mallory[(i + j) % mallory.length] as string, 'PUT', `/api/v1/sessions/${id}`, { schedule: `${1997 + ((i + j) % 29)}-06-15` }));
        for (const res of await Promise.all(puts)) expect(res.status).toBe(200);
      }
      const { during, fetched, limited, report } = await twoFetchers(server, baseline);
      expect(percentile(during, 0.5), report).toBeLessThan(baseline + 100);
      expect(Math.max(...during), report).toBeLessThan(1_000);
      expect(percentile(fetched, 0.5), report).toBeLessThan(1_500);
      // The default budget of the feed ran out: the rest were refused cheaply, nobody else's budget spent.
      expect(limited, report).toBeGreaterThan(0);
    }, 300_000);

    it('with no rate limit at all, two fetchers of the unchanged feed do not hold another user', async () => {
      const unlimited = await startServer({ DATABASE_URL: database.url, RATE_LIMIT: '0' });
      try {
        await unlimited.waitForLog((line) => line.msg === 'time-zone definitions computed', 'the zones worker', 120_000);
        expect((await fetchFeed(120_000, feedUrl, unlimited)).status).toBe(200);
        const quiet = percentile(await victimWhile(sleep(2_000), unlimited), 0.5);
        const { during, limited, report } = await twoFetchers(unlimited, quiet);
        expect(limited, report).toBe(0);
        expect(percentile(during, 0.5), report).toBeLessThan(quiet + 100);
        expect(Math.max(...during), report).toBeLessThan(1_000);
      } finally {
        await unlimited.stop('SIGKILL');
      }
    }, 300_000);

    it('still puts every session at the instant the API lists, read by ical.js through the VTIMEZONEs', async () => {
      // The other feed of the same sessions: the first one spent its budget above.
      const { status, text } = await fetchFeed(120_000, otherFeedUrl);
      expect(status).toBe(200);
      const { events } = parseFeed(text);
      const wrong: string[] = [];
      for (const id of ids) {
        const res = await api(mallory[id % mallory.length] as string, 'GET', `/api/v1/sessions/${id}`);
        const session = ((await res.json()) as { data: { starts_at: string; schedule: string; timezone: string } }).data;
        const event = events.get(`session-${id}@focus`);
        const read = event?.expand(session.schedule, session.schedule)[0]?.starts_at;
        if (read !== session.starts_at) wrong.push(`${session.timezone} ${session.schedule}: ${read} != ${session.starts_at}`);
      }
      expect(wrong).toEqual([]);
    }, 300_000);
  });
}
