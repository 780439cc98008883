import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { redactUrl, requestIdFrom, scrubSecrets } from '../../src/app/log-redaction.js';
import { createTestDatabase } from '../helpers/harness.js';
import { rawConnect, seedUsers } from '../helpers/raw-http.js';
import { buildOnce, startServer } from '../helpers/server-process.js';

/*
 * Issue 10, finding 4: no secret in any log line at any level. A real server at
 * LOG_LEVEL=trace, its stderr captured, is handed a valid token every way a client can
 * send one: in the raw bytes of a request the parser rejects, in the query string, as
 * the request id, in every header that can carry a credential, in the path and in a
 * malformed body.
 */

describe('secrets in logs', () => {
  it('never writes a token, at trace level, however it is sent', async () => {
    await buildOnce();
    const database = await createTestDatabase('sqlite');
    const { alice: token } = (await seedUsers(database.url, ['alice'])) as { alice: string };
    // A secret of another shape: 40 random base62-ish characters, no prefix.
    const other = randomBytes(30).toString('base64url').replace(/[-_]/g, 'x').slice(0, 40);
    const server = await startServer({ DATABASE_URL: database.url, LOG_LEVEL: 'trace', RATE_LIMIT: '600' });
    const base = server.url;
    const auth = { authorization: `Bearer ${token}` };
    const echoed: (string | null)[] = [];
    try {
      // Rejected by the HTTP parser: Fastify's default handler logged these bytes as err.rawPacket.
      const raw = await rawConnect(base);
      raw.write(`GET /api/v1/me HTTP/1.1\r\nHost: focus\r\nAuthorization: Bearer ${token}\r\nBad Header: ${other}\r\n\r\n`);
      expect((await raw.response())?.status).toBe(400);
      raw.destroy();

      const calls: [string, RequestInit][] = [
        [`/api/v1/me?access_token=${token}&limit=5`, {}],
        [`/api/v1/me?api_key=${other}`, { headers: auth }],
        ['/api/v1/me', { headers: { ...auth, 'x-request-id': token } }],
        ['/api/v1/me', { headers: { ...auth, 'x-request-id': other } }],
        ['/api/v1/me', { headers: { 'proxy-authorization': `Bearer ${token}`, cookie: `session=${token}`, 'x-api-key': token, 'x-auth-token': other } }],
        [`/api/v1/${token}`, { headers: auth }],
        [`/api/v1/tasks/${other}`, { headers: auth }],
        ['/api/v1/tasks', { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: `{"context": "${token}` }],
        ['/api/v1/tasks', { method: 'POST', headers: { ...auth, 'content-type': 'text/plain' }, body: token }],
        ['/api/v1/me', { headers: { authorization: `Bearer ${token.slice(0, -1)}x` } }],
        ['/api/v1/me', { headers: { authorization: `Basic ${Buffer.from(`alice:${token}`).toString('base64')}` } }],
      ];
      for (const [path, init] of calls) {
        const res = await fetch(base + path, init);
        echoed.push(res.headers.get('x-request-id'));
        await res.arrayBuffer();
      }
      // The last request's completion is logged before the server stops.
      await server.waitForLog((l) => l.msg === 'request completed' && l.reqId === echoed.at(-1), 'the last request');
    } finally {
      await server.stop();
      await database.drop();
    }
    const logs = server.stderr();
    // The capture is real: every request was logged, query names and all.
    expect(logs.match(/"msg":"incoming request"/g)?.length).toBeGreaterThanOrEqual(11);
    expect(logs).toContain('"url":"/api/v1/me?access_token=…&limit=…"');
    expect(logs).toContain('"msg":"client error"');
    for (const secret of [token.slice(4, 24), token.slice(20), other.slice(0, 16), other.slice(-16)]) {
      expect(logs).not.toContain(secret);
    }
    // A request id that could be a secret is neither echoed nor logged: the server makes its own.
    expect(echoed).not.toContain(token);
    expect(echoed).not.toContain(other);
    expect(echoed.every((id) => id !== null && /^[0-9a-f-]{36}$/.test(id))).toBe(true);
  }, 60_000);

  it('keeps what is safe and useful: short request ids, paths with ids, query parameter names', () => {
    expect(requestIdFrom('checkout-42')).toBe('checkout-42');
    expect(requestIdFrom('0b4a2d1e-8f7c-4c1a-9e5d-2f6b8a7c9d10')).toBe('0b4a2d1e-8f7c-4c1a-9e5d-2f6b8a7c9d10');
    expect(requestIdFrom('fst_abcdefghij0123456789ABCDEFGHIJ012345')).not.toContain('fst_');
    expect(requestIdFrom('line\nbreak')).toMatch(/^[0-9a-f-]{36}$/);
    expect(redactUrl('/api/v1/sessions/12/join?date=2026-12-01')).toBe('/api/v1/sessions/12/join?date=…');
    expect(redactUrl('/api/v1/fst_abcdefghij0123456789ABCDEFGHIJ012345?x')).toBe('/api/v1/[redacted]?x');
    expect(scrubSecrets('at processTicksAndRejections (node:internal/process/task_queues:95:5)')).toContain('processTicksAndRejections');
    expect(scrubSecrets('Authorization: Bearer abc.def')).toBe('Authorization: [redacted]');
  });

  // Found by an operator's audit: a base64url secret with two `-` passed as a request id,
  // and a path spelled `/%69cal/…` (served as the feed) was logged with its secret.
  it('takes base64url secrets for secrets wherever their dashes fall, and reads paths as the router does', () => {
    const feedSecret = 'R3S1eB1WTTT3wdb3-9Qnv2kvJbfKt-sgw6PXD5YNzfw';
    expect(requestIdFrom(feedSecret)).not.toBe(feedSecret);
    expect(scrubSecrets(`GET /api/v1/sessions/${feedSecret}`)).toBe('GET /api/v1/sessions/[redacted]');
    expect(redactUrl(`/%69cal/${feedSecret}.ics`)).toBe('/ical/[redacted]');
    expect(redactUrl(`/ical%2F${feedSecret}.ics?x`)).toBe('/ical/[redacted]?x');
    expect(redactUrl('/api/v1/%E0%A4%A')).toBe('/api/v1/%E0%A4%A');
    expect(requestIdFrom('deploy-2026-11-28-eu-west-1a')).toBe('deploy-2026-11-28-eu-west-1a');
  });
});
