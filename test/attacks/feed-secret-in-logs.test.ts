import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/app/log-redaction.js';
import { createTestDatabase } from '../helpers/harness.js';
import { seedUsers } from '../helpers/raw-http.js';
import { buildOnce, startServer } from '../helpers/server-process.js';

/*
 * A calendar feed's URL is its credential (`/ical/<secret>.ics`, no bearer token), and
 * calendar apps fetch it every few minutes: no log line may hold the secret, at any level,
 * whether the feed is found, revoked or asked for with a query string, and a 404 must not
 * echo it either.
 */

describe('calendar feed secrets in logs', () => {
  it('never writes a feed secret, at trace level', async () => {
    await buildOnce();
    const database = await createTestDatabase('sqlite');
    const { alice: token } = (await seedUsers(database.url, ['alice'])) as { alice: string };
    const server = await startServer({ DATABASE_URL: database.url, LOG_LEVEL: 'trace', RATE_LIMIT: '600' });
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const secrets: string[] = [];
    let lastId: string | null = null;
    try {
      for (let i = 0; i < 3; i++) {
        const created = await fetch(`${server.url}/api/v1/calendar-feeds`, { method: 'POST', headers: auth, body: '{}' });
        expect(created.status).toBe(201);
        const { data } = (await created.json()) as { data: { id: number; url: string } };
        secrets.push(data.url.slice('/ical/'.length, -'.ics'.length));
        const feed = await fetch(server.url + data.url);
        expect(feed.status).toBe(200);
        await feed.arrayBuffer();
        const withQuery = await fetch(`${server.url}${data.url}?x=${secrets[i]}`, { headers: { 'if-none-match': feed.headers.get('etag') ?? '' } });
        expect(withQuery.status).toBe(304);
        expect((await fetch(`${server.url}/api/v1/calendar-feeds/${data.id}`, { method: 'DELETE', headers: { authorization: auth.authorization } })).status).toBe(204);
        const revoked = await fetch(server.url + data.url);
        expect(revoked.status).toBe(404);
        expect(await revoked.text()).not.toContain(secrets[i]);
        // Without the suffix, in other case, or as a longer path: still never logged.
        // Percent-encoded spellings the router reads as the feed's path, and the secret sent as a request id.
        for (const path of [`/ical/${secrets[i]}`, `/ICAL/${secrets[i]}.ics`, `/ical/${secrets[i]}.ics/more`, `/%69cal/${secrets[i]}.ics`, `/ical%2F${secrets[i]}.ics`]) {
          const res = await fetch(server.url + path, { headers: { 'x-request-id': secrets[i] as string } });
          expect(res.headers.get('x-request-id')).not.toBe(secrets[i]);
          lastId = res.headers.get('x-request-id');
          await res.arrayBuffer();
        }
      }
      await server.waitForLog((l) => l.msg === 'request completed' && l.reqId === lastId, 'the last request');
    } finally {
      await server.stop();
      await database.drop();
    }
    const logs = server.stderr();
    expect(logs).toContain('"url":"/ical/[redacted]"');
    for (const secret of secrets) {
      // base64url secrets break scrubSecrets' runs at `-`: every 8-character piece is checked.
      for (let i = 0; i + 8 <= secret.length; i += 4) expect(logs).not.toContain(secret.slice(i, i + 8));
    }
  }, 60_000);

  it('redacts the whole feed segment, whatever it looks like', () => {
    expect(redactUrl('/ical/abc-def_ghi.ics')).toBe('/ical/[redacted]');
    expect(redactUrl('/ical/abc-def_ghi.ics?token=1')).toBe('/ical/[redacted]?token=…');
    expect(redactUrl('/x/ical/a-b-c-d')).toBe('/x/ical/[redacted]');
    expect(redactUrl('/api/v1/calendar-feeds/3')).toBe('/api/v1/calendar-feeds/3');
  });
});
