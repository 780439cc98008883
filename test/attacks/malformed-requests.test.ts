import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase, createTestDatabase } from '../helpers/harness.js';
import { type RawResponse, parseResponse, rawConnect, seedUsers } from '../helpers/raw-http.js';
import { type ServerProcess, buildOnce, startServer } from '../helpers/server-process.js';

/*
 * Issue 10, finding 6 (first part): requests Node's HTTP parser rejects before any route
 * runs are answered problem+json like every other error, and the connection is closed.
 */

beforeAll(buildOnce, 180_000);

describe('requests the HTTP parser rejects', () => {
  let database: TestDatabase;
  let server: ServerProcess;
  let token: string;

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
    ({ alice: token = '' } = await seedUsers(database.url, ['alice']));
    server = await startServer({ DATABASE_URL: database.url, RATE_LIMIT: '0' });
  }, 60_000);
  afterAll(async () => {
    await server?.stop('SIGKILL');
    await database?.drop();
  });

  async function send(bytes: string): Promise<{ answer: RawResponse | undefined; closed: boolean }> {
    const conn = await rawConnect(server.url);
    try {
      conn.write(bytes);
      const answer = await conn.response();
      const closed = await Promise.race([conn.closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 2_000))]);
      return { answer, closed };
    } finally {
      conn.destroy();
    }
  }

  function expectProblem(result: { answer: RawResponse | undefined; closed: boolean }, status: number) {
    expect(result.answer?.status).toBe(status);
    expect(result.answer?.headers['content-type']).toMatch(/^application\/problem\+json(?:;|$)/);
    const body = JSON.parse(result.answer?.body ?? '{}') as Record<string, unknown>;
    expect(body).toMatchObject({ status, type: expect.stringMatching(/^\/problems\/[a-z-]+$/), title: expect.any(String), detail: expect.any(String) });
    expect(result.closed).toBe(true);
  }

  it('answers a garbled request line with 400 problem+json and closes the connection', async () => {
    expectProblem(await send('GARBAGE\r\n\r\n'), 400);
    expectProblem(await send('GET / HTTP/9.9\r\nHost: x\r\n\r\n'), 400);
  });

  it('answers a malformed header with 400 problem+json', async () => {
    expectProblem(await send('GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n'), 400);
    expectProblem(await send('POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n'), 400);
    expectProblem(await send('GET /healthz HTTP/1.1\r\nHost: x\r\nX-Ctl: a\u0001b\r\n\r\n'), 400);
  });

  it('answers headers over 16 KiB with 431 problem+json', async () => {
    expectProblem(await send(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`), 431);
  });

  it('answers an HTTP/1.1 request without Host with 400 problem+json and closes the connection', async () => {
    const result = await send('GET /healthz HTTP/1.1\r\n\r\n');
    expectProblem(result, 400);
    expect(JSON.parse(result.answer?.body ?? '{}').detail).toMatch(/Host/);
    // Before any token or body is looked at.
    expectProblem(await send(`POST /api/v1/tasks HTTP/1.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`), 400);
    expectProblem(await send('GET /api/v1/me HTTP/1.1\r\n\r\n'), 400);
    // HTTP/1.0 has no Host requirement.
    expect((await send('GET /healthz HTTP/1.0\r\n\r\n')).answer?.status).toBe(200);
  });

  it('answers CONNECT with 405 problem+json, an empty Allow, and closes the connection', async () => {
    for (const bytes of [
      'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n',
      'CONNECT example.com:443 HTTP/1.1\r\n\r\n',
      'CONNECT /api/v1/tasks HTTP/1.1\r\nHost: x\r\n\r\n',
      'CONNECT 127.0.0.1:22 HTTP/1.0\r\n\r\nSSH-2.0-x\r\n',
    ]) {
      const result = await send(bytes);
      expectProblem(result, 405);
      expect(result.answer?.headers.allow, bytes).toBe('');
    }
  });

  it('answers a request pipelined before a CONNECT whole, then the 405', async () => {
    const conn = await rawConnect(server.url);
    try {
      conn.write(`GET /api/v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\nCONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n`);
      await conn.closed;
      const text = conn.received();
      const first = parseResponse(text);
      expect(first?.status, text).toBe(200);
      expect(JSON.parse(first?.body ?? '{}').data.handle).toBe('alice');
      const rest = text.slice(text.indexOf('\r\n\r\n') + 4 + Buffer.byteLength(first?.body ?? ''));
      expect(parseResponse(rest)?.status, text).toBe(405);
    } finally {
      conn.destroy();
    }
  });

  it('answers a valid request whole before the 400 for bytes after it, and the write it made is not lost', async () => {
    const conn = await rawConnect(server.url);
    try {
      // Content-Length 2 covers `{}`; the rest is a second request the parser refuses.
      conn.write(`POST /api/v1/calendar-feeds HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}garbage\r\n\r\n`);
      await conn.closed;
      const text = conn.received();
      const first = parseResponse(text);
      // The feed's secret URL, shown only in this answer, reaches the client.
      expect(first?.status, text).toBe(201);
      expect(JSON.parse(first?.body ?? '{}').data.url).toMatch(/^\/ical\/.+\.ics$/);
      const rest = text.slice(text.indexOf('\r\n\r\n') + 4 + Buffer.byteLength(first?.body ?? ''));
      expect(parseResponse(rest)?.status, text).toBe(400);
    } finally {
      conn.destroy();
    }
  });

  it('keeps serving everyone else', async () => {
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});
