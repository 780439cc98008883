import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthService } from '../../src/features/auth/auth.service.js';
import { openStorage } from '../../src/storage/database.js';
import { useTestDatabase } from '../helpers/harness.js';
import { type CliResult, type ServerProcess, buildOnce, focusBin, startServer } from '../helpers/server-process.js';

/*
 * `focus serve` as a real process on a real port and a SQLite file: what `npm start`
 * runs. One server goes through first run, logging and graceful shutdown in order.
 */

beforeAll(buildOnce, 180_000);

describe('focus serve', () => {
  const database = useTestDatabase('sqlite');
  let server: ServerProcess;
  let base: string;
  let token: string;

  beforeAll(async () => {
    server = await startServer({ DATABASE_URL: database.url, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'trace', RATE_LIMIT: '0' });
    const ready = await server.waitForLog((l) => typeof l.msg === 'string' && l.msg.startsWith('focus serving'), 'startup');
    base = ready.address as string;
  }, 60_000);

  afterAll(() => {
    server?.kill('SIGKILL');
  });

  it('starts on an empty database: says which, how to create a user and token, and answers health checks', async () => {
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const started = server.logs().find((l) => l.msg?.startsWith('focus serving'));
    expect(started?.database).toBe(database.url);
    const hint = await server.waitForLog((l) => l.hint === 'first-run', 'first-run hint');
    expect(hint.level).toBe(40);
    expect(hint.msg).toContain('npx focus users add <handle> --org <org_id>');
    expect(hint.msg).toContain('npx focus tokens issue <handle>');
    expect(hint.msg).toContain(`${base}/api/v1/me`);
    // The log scrubber leaves the hint whole: it holds nothing shaped like a credential.
    expect(hint.msg).toContain('`Authorization` header after the scheme `Bearer`');
    expect(hint.msg).not.toContain('[redacted]');

    const health = await fetch(`${base}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready' });
    // Results and logs are kept apart: serve has no result, so stdout stays empty.
    expect(server.stdout()).toBe('');
  });

  it('a second server on a taken port fails with one line and exits 1, leaving nothing running', async () => {
    const port = new URL(base).port;
    const second = await focusBin({ DATABASE_URL: 'sqlite::memory:', PORT: port, HOST: '127.0.0.1', LOG_LEVEL: 'warn' }, 'serve');
    expect(second.code).toBe(1);
    expect(second.stderr.split('\n').filter((l) => l.startsWith('focus: ')), second.stderr).toEqual([expect.stringContaining('EADDRINUSE')]);
  }, 30_000);

  it('logs JSON with a request id and never the token', async () => {
    const storage = openStorage({ databaseUrl: database.url });
    try {
      await createAuthService(storage).addUser('alice', [1]);
      token = (await createAuthService(storage).issueToken('alice')).token;
    } finally {
      await storage.close();
    }
    const me = await fetch(`${base}/api/v1/me`, { headers: { authorization: `Bearer ${token}`, 'x-request-id': 'serve-test-me' } });
    expect(me.status).toBe(200);
    expect(me.headers.get('x-request-id')).toBe('serve-test-me');
    // Change the last character (to one it is not), which breaks the checksum.
    const typo = `${token.slice(0, -1)}${token.endsWith('X') ? 'Y' : 'X'}`;
    const bad = await fetch(`${base}/api/v1/me`, { headers: { authorization: `Bearer ${typo}` } });
    expect(bad.status).toBe(401);
    const badId = bad.headers.get('x-request-id');
    expect(badId).toMatch(/^[0-9a-f-]{36}$/);

    const completed = await server.waitForLog((l) => l.reqId === 'serve-test-me' && l.msg === 'request completed', 'request log');
    expect((completed.res as { statusCode: number }).statusCode).toBe(200);
    await server.waitForLog((l) => l.reqId === badId && l.msg === 'request completed', 'the 401 request log');
    const all = server.stderr();
    expect(all).not.toContain(token.slice(4));
    expect(all).not.toContain(token.slice(4, -1));
  });

  it('on SIGTERM lets an in-flight bulk import finish, refuses new work and exits 0', async () => {
    const created = await fetch(`${base}/api/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ org_id: 1, name: 'Deep work', type: 'standard', duration: 50, schedule: '2026-12-01', time: '9:00 AM' }),
    });
    expect(created.status).toBe(201);
    const sessionId = ((await created.json()) as { data: { id: number } }).data.id;

    const tasks = Array.from({ length: 1000 }, (_, i) => ({ context: `Imported task ${i}`, source: 'todoist', source_id: i }));
    const body = Buffer.from(JSON.stringify({ session_id: sessionId, tasks }));
    const half = Math.floor(body.length / 2);
    const { port } = new URL(base);

    // Half of the body now, the rest only once shutdown has begun: the request is
    // certainly in flight when SIGTERM arrives.
    let sendRest = (): void => undefined;
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/api/v1/tasks/bulk',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            'content-length': String(body.length),
            'x-request-id': 'serve-test-bulk',
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (c: string) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', reject);
      req.write(body.subarray(0, half));
      sendRest = () => req.end(body.subarray(half));
    });

    await server.waitForLog((l) => l.reqId === 'serve-test-bulk' && l.msg === 'incoming request', 'the bulk request arriving');
    server.kill('SIGTERM');
    await server.waitForLog((l) => l.msg?.startsWith('shutting down') === true, 'shutdown start');

    // New work is turned away while the import is still open.
    const late = await fetch(`${base}/healthz`).then(
      (r) => r.status,
      () => 'refused',
    );
    expect([503, 'refused']).toContain(late);

    sendRest();
    const result = await response;
    expect(result.status, result.body).toBe(200);
    expect((JSON.parse(result.body) as { meta: unknown }).meta).toEqual({ created: 1000, updated: 0, unchanged: 0 });
    expect(await server.exited).toBe(0);

    const logs = server.logs();
    const order = (msg: string) => logs.findIndex((l) => l.msg?.startsWith(msg) === true);
    const bulkDone = logs.findIndex((l) => l.reqId === 'serve-test-bulk' && l.msg === 'request completed');
    expect(order('shutting down')).toBeLessThan(bulkDone);
    expect(bulkDone).toBeLessThan(order('shut down cleanly'));
    expect(server.stderr()).not.toContain(token.slice(4));

    // Everything the import said it wrote is there.
    const storage = openStorage({ databaseUrl: database.url });
    try {
      const row = await storage.db
        .selectFrom('tasks')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('source', '=', 'todoist')
        .executeTakeFirstOrThrow();
      expect(Number(row.n)).toBe(1000);
    } finally {
      await storage.close();
    }
  }, 60_000);
});

describe('focus serve with invalid configuration', () => {
  const expectRefusal = (result: CliResult, variable: string) => {
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    const lines = result.stderr.split('\n').filter((l) => l !== '');
    expect(lines, result.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^focus: invalid configuration: .*${variable}`));
  };

  it('refuses to start with one clear line and a non-zero exit', async () => {
    const [port, url, level] = await Promise.all([
      focusBin({ DATABASE_URL: 'sqlite::memory:', PORT: 'abc' }, 'serve'),
      focusBin({ DATABASE_URL: 'mysql://x', PORT: '0' }, 'serve'),
      focusBin({ DATABASE_URL: 'sqlite::memory:', PORT: '0', LOG_LEVEL: 'loud' }, 'serve'),
    ]);
    expectRefusal(port, 'PORT');
    expectRefusal(url, 'DATABASE_URL');
    expectRefusal(level, 'LOG_LEVEL');
  }, 60_000);
});
