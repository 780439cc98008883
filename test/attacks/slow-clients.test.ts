import autocannon from 'autocannon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase, createTestDatabase } from '../helpers/harness.js';
import { type RawConnection, rawConnect, seedUsers, sleep } from '../helpers/raw-http.js';
import { type ServerProcess, buildOnce, startServer } from '../helpers/server-process.js';

/*
 * Issue 10, finding 1: slow clients. Over a real `focus serve` on SQLite (where the
 * concurrency gate lets 16 API requests run at once), with short deadlines so the suite
 * runs in seconds: headers within HEADERS_TIMEOUT_MS, bodies within BODY_TIMEOUT_MS after
 * them, and after SIGTERM an exit within DRAIN_TIMEOUT_MS whatever clients do.
 */

const HEADERS_MS = 1_500;
const BODY_MS = 3_000;

beforeAll(buildOnce, 180_000);

/** Starts a POST whose body never finishes: headers now, then a byte every `everyMs`. */
async function trickle(base: string, token: string, everyMs = 250): Promise<RawConnection & { stop(): void }> {
  const conn = await rawConnect(base);
  conn.write(
    `POST /api/v1/tasks HTTP/1.1\r\nHost: focus\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`,
  );
  const timer = setInterval(() => conn.write(' '), everyMs);
  void conn.closed.then(() => clearInterval(timer));
  return Object.assign(conn, { stop: () => clearInterval(timer) });
}

describe('slow clients against a real server', () => {
  let database: TestDatabase;
  let server: ServerProcess;
  let tokens: Record<string, string>;

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    tokens = await seedUsers(database.url, ['alice', 'bob']);
    server = await startServer({
      DATABASE_URL: database.url,
      RATE_LIMIT: '0',
      HEADERS_TIMEOUT_MS: String(HEADERS_MS),
      BODY_TIMEOUT_MS: String(BODY_MS),
    });
  }, 60_000);

  afterAll(async () => {
    await server?.stop('SIGKILL');
    await database?.drop();
  });

  it('answers everyone else while 20 connections trickle their bodies, then 408s the tricklers and closes them', async () => {
    const tricklers = await Promise.all(Array.from({ length: 20 }, () => trickle(server.url, tokens.alice as string)));
    try {
      await sleep(300);
      // Every trickler is past its headers and holding its connection; the API still answers at once.
      const started = Date.now();
      const res = await fetch(`${server.url}/api/v1/tasks`, { headers: { authorization: `Bearer ${tokens.bob}` } });
      const latency = Date.now() - started;
      expect(res.status).toBe(200);
      expect(latency, `GET /tasks took ${latency} ms while 20 bodies trickled`).toBeLessThan(BODY_MS / 2);
      expect(tricklers.every((t) => t.received() === '')).toBe(true);

      const answers = await Promise.all(tricklers.map((t) => t.response()));
      const closedAfter = await Promise.all(tricklers.map((t) => t.closed));
      for (const answer of answers) {
        expect(answer?.status).toBe(408);
        expect(answer?.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(answer?.headers.connection).toBe('close');
        expect(JSON.parse(answer?.body ?? '{}')).toMatchObject({ status: 408, type: expect.stringMatching(/\/problems\/request-timeout$/) });
      }
      // Closed by the server, near the deadline, though each kept sending.
      for (const ms of closedAfter) {
        expect(ms).toBeGreaterThanOrEqual(BODY_MS - 100);
        expect(ms).toBeLessThan(BODY_MS + 2_000);
      }
    } finally {
      tricklers.forEach((t) => t.destroy());
    }
  }, 30_000);

  it('survives the body deadline of a request refused before its body was read (413 by Content-Length)', async () => {
    const conn = await rawConnect(server.url);
    try {
      conn.write(`POST /api/v1/tasks HTTP/1.1\r\nHost: focus\r\nAuthorization: Bearer ${tokens.alice}\r\nContent-Type: application/json\r\nContent-Length: 2000000\r\n\r\n{"a":`);
      expect((await conn.response())?.status).toBe(413);
      // Past the deadline of the body nobody read: an unhandled stream error here would end the process.
      await sleep(BODY_MS + 700);
      expect(server.running).toBe(true);
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    } finally {
      conn.destroy();
    }
  }, 20_000);

  it('408s a client that trickles its headers, and closes an idle connection, within the header deadline', async () => {
    const slow = await rawConnect(server.url);
    slow.write('GET /healthz HTTP/1.1\r\nHost: focus\r\nX-Slow: ');
    const timer = setInterval(() => slow.write('a'), 200);
    const idle = await rawConnect(server.url);
    try {
      const answer = await slow.response();
      expect(answer?.status).toBe(408);
      expect(answer?.headers['content-type']).toBe('application/problem+json');
      expect(JSON.parse(answer?.body ?? '{}')).toMatchObject({ status: 408, title: 'Request timeout' });
      const [slowMs, idleMs] = await Promise.all([slow.closed, idle.closed]);
      for (const ms of [slowMs, idleMs]) {
        expect(ms).toBeGreaterThanOrEqual(HEADERS_MS - 100);
        expect(ms).toBeLessThan(HEADERS_MS + 1_500);
      }
      expect(idle.received()).toContain('408');
    } finally {
      clearInterval(timer);
      slow.destroy();
      idle.destroy();
    }
  }, 20_000);

  // Clients that hang up mid-request (a load tool stopping, a phone losing signal): a request
  // whose client was gone before it reached the gate once took a slot for good, and after 16
  // of them every API request waited forever (found by the live-clients bench: 1,000 pollers
  // of /changes stopping at once).
  it('keeps answering after a load tool closes 500 connections with requests in flight, twice', async () => {
    const auth = { authorization: `Bearer ${tokens.alice}` };
    const feed = await fetch(`${server.url}/api/v1/changes?limit=500`, { headers: auth });
    const { next_cursor: cursor } = (await feed.json()) as { next_cursor: string };
    // 500 connections polling the change feed for a second, closed with their requests in flight.
    for (let round = 0; round < 2; round++) {
      await new Promise<void>((resolve, reject) =>
        autocannon({ url: `${server.url}/api/v1/changes?cursor=${cursor}`, connections: 500, duration: 1, headers: auth }, (error) =>
          error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(),
        ),
      );
    }
    await sleep(200);
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${server.url}/api/v1/tasks`, { headers: { authorization: `Bearer ${tokens.bob}` }, signal: AbortSignal.timeout(5_000) });
      expect(res.status).toBe(200);
    }
  }, 60_000);

  // Found by an operator's audit: a response pipelined behind another is not attached to its
  // socket, so when the client closed, its slot never came back; 20 such requests wedged the
  // API for good (the probes kept answering). Calendar feeds, with a gate of 4, needed no token.
  it('keeps answering after clients pipeline requests and hang up, on the API and on feeds', async () => {
    const auth = `Authorization: Bearer ${tokens.alice}\r\n`;
    for (const [path, headers] of [['/api/v1/me', auth], [`/ical/${'A'.repeat(43)}.ics`, '']] as const) {
      for (let round = 0; round < 4; round++) {
        const conn = await rawConnect(server.url);
        conn.write(`GET ${path} HTTP/1.1\r\nHost: focus\r\n${headers}\r\n`.repeat(20));
        await sleep(20);
        conn.destroy();
      }
    }
    await sleep(300);
    const me = await fetch(`${server.url}/api/v1/me`, { headers: { authorization: `Bearer ${tokens.bob}` }, signal: AbortSignal.timeout(5_000) });
    expect(me.status).toBe(200);
    const feed = await fetch(`${server.url}/ical/${'B'.repeat(43)}.ics`, { signal: AbortSignal.timeout(5_000) });
    expect(feed.status).toBe(404);
  }, 30_000);

  it('answers others while 20 clients leave large answers unread', async () => {
    const readers = [];
    for (let i = 0; i < 20; i++) {
      const conn = await rawConnect(server.url);
      conn.socket.pause();
      conn.write(`GET /api/v1/openapi.json HTTP/1.1\r\nHost: focus\r\n\r\n`.repeat(40));
      readers.push(conn);
    }
    try {
      await sleep(500);
      const me = await fetch(`${server.url}/api/v1/me`, { headers: { authorization: `Bearer ${tokens.bob}` }, signal: AbortSignal.timeout(5_000) });
      expect(me.status).toBe(200);
    } finally {
      readers.forEach((r) => r.destroy());
    }
  }, 30_000);
});

describe('shutdown with a client that never finishes', () => {
  it('exits within the drain deadline after SIGTERM, whatever the client does', async () => {
    const database = await createTestDatabase('sqlite');
    const tokens = await seedUsers(database.url, ['alice']);
    const DRAIN_MS = 1_500;
    // The body deadline is far away: only the drain deadline can end this.
    const server = await startServer({ DATABASE_URL: database.url, RATE_LIMIT: '0', BODY_TIMEOUT_MS: '60000', DRAIN_TIMEOUT_MS: String(DRAIN_MS) });
    const trickler = await trickle(server.url, tokens.alice as string, 200);
    try {
      await server.waitForLog((l) => l.msg === 'incoming request' && (l.req as { method?: string } | undefined)?.method === 'POST', 'the trickling request');
      const signalled = Date.now();
      server.kill('SIGTERM');
      const code = await server.exited;
      const took = Date.now() - signalled;
      expect(code).toBe(1);
      expect(took).toBeGreaterThanOrEqual(DRAIN_MS - 100);
      expect(took).toBeLessThan(DRAIN_MS + 3_000);
      expect(server.logs().some((l) => l.msg?.startsWith('drain deadline passed') === true)).toBe(true);
    } finally {
      trickler.stop();
      trickler.destroy();
      await server.stop('SIGKILL');
      await database.drop();
    }
  }, 60_000);
});
