import { PassThrough } from 'node:stream';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase, createTestDatabase, testConfig } from '../../test/helpers/harness.js';
import { rawConnect, sleep } from '../../test/helpers/raw-http.js';
import { createAuthService } from '../features/auth/auth.service.js';
import { openStorage } from '../storage/database.js';
import { buildApp } from './app.js';
import { addConcurrencyGate } from './concurrency.plugin.js';
import { drainPlugin } from './drain.plugin.js';

/*
 * Closing with connections open. Node's server.close() used to wait for a keep-alive
 * connection whose request was running for the whole keep-alive timeout (72 s) after the
 * response went out, and for a connection opened but never used for good: SIGTERM ran
 * into the drain deadline, and tests' app.close() hung.
 */

/** Resolves with how long `promise` took, or fails once `ms` passed. */
async function within<T>(ms: number, promise: Promise<T>): Promise<number> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms)))]);
  clearTimeout(timer);
  return Date.now() - started;
}

/** A client that asks for `path` and goes away 100 ms later, before the answer. */
async function leaveMidRequest(base: string, path: string): Promise<void> {
  const conn = await rawConnect(base);
  conn.write(`GET ${path} HTTP/1.1\r\nHost: focus\r\n\r\n`);
  await sleep(100);
  conn.destroy();
  await sleep(50);
}

describe('closing with requests in flight', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
  });
  afterAll(async () => {
    await database.drop();
  });

  it('answers a request whose body arrives after closing began, with Connection: close, and closes at once', async () => {
    const storage = openStorage({ databaseUrl: database.url });
    const app = await buildApp({ config: testConfig(database.url), storage, logger: false });
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    const auth = createAuthService(storage);
    await auth.addUser('alice', [1]);
    const { token } = await auth.issueToken('alice');

    const body = JSON.stringify({ org_id: 1, name: 'written while the server closes', type: 'standard', duration: 30, schedule: '2026-05-01', time: '9:00 AM' });
    const conn = await rawConnect(base);
    conn.write(
      `POST /api/v1/sessions HTTP/1.1\r\nHost: focus\r\nConnection: keep-alive\r\nAuthorization: Bearer ${token}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
    );
    await sleep(100);
    const closing = app.close();
    await sleep(50);
    conn.write(body);
    const res = await conn.response();
    expect(res?.status).toBe(201);
    expect(res?.headers.connection).toBe('close');
    await within(2_000, conn.closed);
    expect(await within(2_000, closing)).toBeLessThan(2_000);
    await storage.close();
  });

  it('closes connections opened but never used, which Node counts as waiting for headers', async () => {
    const app = Fastify({ logger: false });
    await app.register(drainPlugin);
    app.get('/', () => 'ok');
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    // Clients keep spare connections; one that half-sent its headers when closing began is cut too.
    const spare = await rawConnect(base);
    const halfSent = await rawConnect(base);
    halfSent.write('GET / HTTP/1.1\r\nHost: fo');
    await sleep(50);
    const closing = app.close();
    await within(2_000, Promise.all([spare.closed, halfSent.closed]));
    expect(await within(2_000, closing)).toBeLessThan(2_000);
  });

  it('keeps what handlers use open until a handler whose client went away has finished', async () => {
    const app = Fastify({ logger: false });
    // Registered before the drain plugin, as storage is: its onClose runs after the drain plugin's.
    let resourceOpen = true;
    app.addHook('onClose', (_instance, done) => {
      resourceOpen = false;
      done();
    });
    await app.register(drainPlugin);
    let sawResource: boolean | undefined;
    app.get('/slow', async () => {
      await sleep(400);
      sawResource = resourceOpen;
      return { ok: true };
    });
    await leaveMidRequest(await app.listen({ port: 0, host: '127.0.0.1' }), '/slow');
    const took = await within(3_000, app.close());
    expect(sawResource).toBe(true);
    expect(resourceOpen).toBe(false);
    expect(took).toBeGreaterThanOrEqual(200);
  });

  it('does not wait for an event stream whose client went away', async () => {
    const app = Fastify({ logger: false });
    await app.register(drainPlugin);
    app.get('/stream', async (_request, reply) => {
      reply.hijack();
      reply.raw.writeHead(200, { 'content-type': 'text/event-stream' });
      reply.raw.write(': open\n\n');
    });
    await leaveMidRequest(await app.listen({ port: 0, host: '127.0.0.1' }), '/stream');
    expect(await within(3_000, app.close())).toBeLessThan(1_000);
  });

  it('closes a connection whose response was on its way before closing began, once it is out', async () => {
    const app = Fastify({ logger: false });
    await app.register(drainPlugin);
    const body = new PassThrough();
    app.get('/slow', (_request, reply) => reply.type('text/plain').send(body));
    const base = await app.listen({ port: 0, host: '127.0.0.1' });

    const conn = await rawConnect(base);
    conn.write('GET /slow HTTP/1.1\r\nHost: focus\r\nConnection: keep-alive\r\n\r\n');
    body.write('first part, ');
    await sleep(100);
    // Its headers went out before closing: they say keep-alive.
    expect(conn.received()).toMatch(/^HTTP\/1\.1 200/);
    expect(conn.received().toLowerCase()).toContain('connection: keep-alive');
    const closing = app.close();
    await sleep(50);
    body.end('last part');
    await within(2_000, conn.closed);
    expect(conn.received()).toContain('last part');
    expect(await within(2_000, closing)).toBeLessThan(2_000);
  });

  it('does not wait for requests the concurrency gate dropped because their clients went away', async () => {
    const app = Fastify({ logger: false });
    await app.register(drainPlugin);
    let release: (() => void) | undefined;
    await app.register((api, _options, done) => {
      addConcurrencyGate(api, 1);
      api.get('/hold', () => new Promise((resolve) => (release = () => resolve({ ok: true }))));
      api.get('/quick', () => ({ ok: true }));
      done();
    });
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    const holder = fetch(`${base}/hold`);
    await sleep(50);
    // One client hangs up while it waits its turn, one pipelines three requests and hangs up:
    // none of them ever starts, and none is answered.
    await leaveMidRequest(base, '/quick');
    const pipelined = await rawConnect(base);
    pipelined.write('GET /quick HTTP/1.1\r\nHost: focus\r\n\r\n'.repeat(3));
    await sleep(50);
    pipelined.destroy();
    await sleep(50);
    release?.();
    expect((await holder).status).toBe(200);
    expect(await within(3_000, app.close())).toBeLessThan(1_000);
  });
});
