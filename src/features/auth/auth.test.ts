import { expect, it, vi } from 'vitest';
import { StatementCapture } from '../../../test/helpers/statements.js';
import { Client, describeEachDialect, useTestApp } from '../../../test/helpers/harness.js';
import { AUTH_CACHE_TTL_MS, AUTH_CHANNEL, createAuthRepository } from './auth.repository.js';
import { openStorage } from '../../storage/database.js';
import { createAuthService } from './auth.service.js';
import { generateToken, hashToken } from './auth.token.js';

const ME = '/api/v1/me';

describeEachDialect('bearer tokens over HTTP', (dialect) => {
  const t = useTestApp(dialect, { alice: [7, 3] });

  /** Stores a token for a user directly, with any expiry, and returns a client holding it. */
  async function tokenFor(handle: string, expiresAt: string | null): Promise<Client> {
    const repo = createAuthRepository(t.storage);
    const user = await repo.findUserByHandle(t.storage.db, handle);
    if (user === undefined) throw new Error(`no user ${handle}`);
    const token = generateToken();
    await repo.insertToken(t.storage.db, { userId: user.id, name: 'test', tokenHash: hashToken(token), createdAt: new Date().toISOString(), expiresAt });
    return new Client(t.app, token);
  }

  const withHeader = (authorization: string) => t.anonymous.request('GET', ME, undefined, { authorization });

  it('GET /me answers who the token belongs to, with every org', async () => {
    const res = await t.alice.get(ME);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ data: { handle: 'alice', org_ids: [3, 7], timezone: 'UTC', reminders: [5] } });
    const solo = await t.user('solo', [42]);
    expect((await solo.get(ME)).body).toEqual({ data: { handle: 'solo', org_ids: [42], timezone: 'UTC', reminders: [5] } });
  });

  it('accepts the scheme in any case', async () => {
    expect((await withHeader(`bearer ${t.alice.token}`)).status).toBe(200);
    expect((await withHeader(`BEARER ${t.alice.token}`)).status).toBe(200);
  });

  it('no token: 401 with WWW-Authenticate: Bearer', async () => {
    const res = await t.anonymous.get(ME);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer\b/);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ status: 401, title: 'Unauthorized' });
    expect((res.body as { type: string }).type).toMatch(/^https?:\/\//);
    // Every protected route, not just /me; an unauthenticated body is never parsed.
    expect((await t.anonymous.get('/api/v1/tasks')).status).toBe(401);
    expect((await t.anonymous.post('/api/v1/tasks/bulk', { session_id: 1, tasks: [] })).status).toBe(401);
    expect((await t.anonymous.request('POST', '/api/v1/tasks', '{broken')).status).toBe(401);
    expect((await t.anonymous.delete('/api/v1/sessions/1')).status).toBe(401);
  });

  it('malformed Authorization headers: 401 with WWW-Authenticate: Bearer', async () => {
    for (const header of ['', 'Bearer', 'Bearer ', `Basic ${t.alice.token}`, `Token ${t.alice.token}`, `Bearer ${t.alice.token} extra`, String(t.alice.token)]) {
      const res = await withHeader(header);
      expect(res.status, JSON.stringify(header)).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer\b/);
    }
  });

  it('every failed bearer check answers the very same body; invalid_token only when a bearer token was sent (RFC 6750)', async () => {
    const unknown = await new Client(t.app, generateToken()).get(ME);
    expect(unknown.headers['www-authenticate']).toBe('Bearer realm="focus", error="invalid_token"');
    const noToken = await t.anonymous.get(ME);
    expect(noToken.headers['www-authenticate']).toBe('Bearer realm="focus"');
    expect(noToken.text).toBe(unknown.text);
    const withoutBearerToken = ['', 'Bearer', 'Bearer ', 'Basic xyz', `Basic ${t.alice.token}`, `Token ${t.alice.token}`, String(t.alice.token)];
    const malformedBearerToken = ['Bearer abc', 'Bearer fst_short', `Bearer ${t.alice.token} extra`, `Bearer ${String(t.alice.token).slice(0, -1)}!`];
    for (const [headers, challenge] of [
      [withoutBearerToken, 'Bearer realm="focus"'],
      [malformedBearerToken, 'Bearer realm="focus", error="invalid_token"'],
    ] as const) {
      for (const header of headers) {
        const res = await withHeader(header);
        expect(res.status, JSON.stringify(header)).toBe(401);
        expect(res.text, JSON.stringify(header)).toBe(unknown.text);
        expect(res.headers['www-authenticate'], JSON.stringify(header)).toBe(challenge);
      }
    }
  });

  it('unknown, bad-checksum, revoked and expired tokens are all 401 with the very same body', async () => {
    const unknown = new Client(t.app, generateToken());
    const real = String(t.alice.token);
    const last = real.at(-1) === 'A' ? 'B' : 'A';
    const badChecksum = new Client(t.app, real.slice(0, -1) + last);
    const notOurs = new Client(t.app, 'ghp_abcdefghijklmnopqrstuvwxyz0123456789');

    const toRevoke = await t.user('alice', [7]);
    expect((await toRevoke.get(ME)).status).toBe(200);
    await createAuthService(t.storage).revokeToken(toRevoke.tokenId);

    const expired = await tokenFor('alice', new Date(Date.now() - 1000).toISOString());
    const valid = await tokenFor('alice', new Date(Date.now() + 3_600_000).toISOString());
    expect((await valid.get(ME)).status).toBe(200);

    const bodies = new Set<string>();
    for (const client of [unknown, badChecksum, notOurs, toRevoke, expired]) {
      const res = await client.get(ME);
      expect(res.status, client.token).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer\b/);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.text).not.toContain(String(client.token));
      bodies.add(res.text);
    }
    expect(bodies.size).toBe(1);
    // The user's other tokens keep working.
    expect((await t.alice.get(ME)).status).toBe(200);
  });

  /**
   * Asks until the answer matches, for at most the auth cache's bound; returns how many
   * requests it took. A change committed by another process reaches this one through the
   * file's data version (SQLite: the very next request) or a signal (PostgreSQL: as soon
   * as it arrives, at most AUTH_CACHE_TTL_MS later even if it is lost).
   */
  async function untilAnswered(client: Client, expected: (res: { status: number; body: unknown }) => boolean): Promise<number> {
    const started = performance.now();
    for (let requests = 1; ; requests++) {
      const res = await client.get(ME);
      if (expected(res)) return requests;
      expect(performance.now() - started, JSON.stringify(res.body)).toBeLessThan(AUTH_CACHE_TTL_MS);
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  it('a revocation or membership committed by another process applies within the bound (SQLite: the next request)', async () => {
    // Another connection to the same database, as the CLI or a second instance would hold.
    const other = openStorage({ databaseUrl: t.url });
    try {
      const bob = await t.user('bob-elsewhere', [5]);
      expect((await bob.get(ME)).body).toEqual({ data: { handle: 'bob-elsewhere', org_ids: [5], timezone: 'UTC', reminders: [5] } });
      await createAuthService(other).addUser('bob-elsewhere', [6]);
      const orgs = await untilAnswered(bob, (res) => JSON.stringify(res.body) === JSON.stringify({ data: { handle: 'bob-elsewhere', org_ids: [5, 6], timezone: 'UTC', reminders: [5] } }));
      if (dialect === 'sqlite') expect(orgs).toBe(1);
      expect((await bob.get(ME)).status).toBe(200);
      await createAuthService(other).revokeToken(bob.tokenId);
      const revoked = await untilAnswered(bob, (res) => res.status === 401);
      if (dialect === 'sqlite') expect(revoked).toBe(1);
    } finally {
      await other.close();
    }
  });

  it('a revocation by this process applies to its very next request, cached lookup or not', async () => {
    const carol = await t.user('carol-here', [5]);
    for (let i = 0; i < 3; i++) expect((await carol.get(ME)).status).toBe(200);
    await createAuthService(t.storage).revokeToken(carol.tokenId);
    expect((await carol.get(ME)).status).toBe(401);
  });

  it('lookups of a token arriving while it is read share that read; one begun after a change reads again', async () => {
    const dave = await t.user('dave-shared', [5]);
    const capture = new StatementCapture();
    const spied = openStorage({ databaseUrl: t.url }, { plugins: [capture] });
    try {
      // PostgreSQL tells versions once it listens; until then every lookup reads.
      await vi.waitFor(() => expect(spied.signals.version(AUTH_CHANNEL)).toBeDefined());
      const repo = createAuthRepository(spied);
      const hash = hashToken(String(dave.token));
      const reads = () => capture.compiled(spied.db).filter((q) => /from "tokens"/.test(q.sql)).length;
      const found = await Promise.all(Array.from({ length: 20 }, () => repo.findToken(hash)));
      expect(new Set(found.map((f) => f?.tokenId))).toEqual(new Set([dave.tokenId]));
      expect(reads()).toBe(1);
      if (dialect !== 'sqlite') return; // a signal moves PostgreSQL's version only when it comes back
      capture.reset();
      const fresh = createAuthRepository(spied);
      const first = fresh.findToken(hash);
      const joined = fresh.findToken(hash);
      await spied.signals.publish(spied.db, AUTH_CHANNEL);
      const after = fresh.findToken(hash);
      await Promise.all([first, joined, after]);
      expect(reads()).toBe(2);
    } finally {
      await spied.close();
    }
  });

  it('a token issued with a ttl stops working once it expires', async () => {
    const short = await t.user('ttl-user', [9], { ttl: '1s' });
    expect((await short.get(ME)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1100));
    const res = await short.get(ME);
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer\b/);
  });

  it('keeps last_used_at', async () => {
    const fresh = await t.user('lastused', [1]);
    const read = () => t.storage.db.selectFrom('tokens').select('last_used_at').where('id', '=', fresh.tokenId).executeTakeFirstOrThrow();
    expect((await read()).last_used_at).toBeNull();
    const before = new Date().toISOString();
    expect((await fresh.get(ME)).status).toBe(200);
    const used = (await read()).last_used_at;
    expect(used).not.toBeNull();
    expect(used! >= before).toBe(true);
    expect(used! <= new Date().toISOString()).toBe(true);
    // A failed request with someone else's bad token does not touch it.
    await withHeader(`Bearer ${generateToken()}`);
    expect((await read()).last_used_at).toBe(used);
  });

  it('stores only a hash of the token', async () => {
    const rows = await t.storage.db.selectFrom('tokens').select('token_hash').execute();
    expect(rows.map((r) => r.token_hash)).toContain(hashToken(String(t.alice.token)));
    expect(rows.map((r) => r.token_hash)).not.toContain(t.alice.token);
    expect(String(t.alice.token)).toMatch(/^fst_[0-9A-Za-z]{32,}$/);
  });
});
