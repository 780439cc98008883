import { expect, it } from 'vitest';
import { type Client, describeEachDialect, errorPaths, useTestApp } from '../../../test/helpers/harness.js';
import { openStorage } from '../../storage/database.js';
import { createAuthService } from './auth.service.js';
import { AUTH_CACHE_TTL_MS } from './auth.repository.js';

const ME = '/api/v1/me';

interface Problem {
  errors: { path: string; message: string }[];
}

describeEachDialect('GET and PUT /me: the home time zone', (dialect) => {
  const t = useTestApp(dialect, { alice: [1], bob: [1, 2] });

  const zoneOf = async (handle: string) =>
    (await t.storage.db.selectFrom('users').select('timezone').where('handle', '=', handle).executeTakeFirstOrThrow()).timezone;

  it('every user starts on UTC', async () => {
    expect((await t.alice.get(ME)).body).toEqual({ data: { handle: 'alice', org_ids: [1], timezone: 'UTC', reminders: [5] } });
    expect((await t.bob.get(ME)).body).toEqual({ data: { handle: 'bob', org_ids: [1, 2], timezone: 'UTC', reminders: [5] } });
  });

  it('PUT changes it, answers the new /me, stores the canonical spelling and the next request sees it', async () => {
    const user = await t.user('carol', [3]);
    const res = await user.put(ME, { timezone: 'europe/berlin' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ data: { handle: 'carol', org_ids: [3], timezone: 'Europe/Berlin', reminders: [5] } });
    expect(await zoneOf('carol')).toBe('Europe/Berlin');
    // The token lookup is cached per data version: the write must not leave the old zone behind.
    expect((await user.get(ME)).body).toEqual({ data: { handle: 'carol', org_ids: [3], timezone: 'Europe/Berlin', reminders: [5] } });
    // A link keeps the name the user chose.
    expect((await user.put(ME, { timezone: 'US/Eastern' })).body).toMatchObject({ data: { timezone: 'US/Eastern' } });
    expect((await user.get(ME)).body).toMatchObject({ data: { timezone: 'US/Eastern' } });
    expect((await user.put(ME, { timezone: 'asia/kolkata' })).body).toMatchObject({ data: { timezone: 'Asia/Kolkata' } });
    expect((await user.put(ME, { timezone: 'US/Eastern' })).body).toMatchObject({ data: { timezone: 'US/Eastern' } });
    // Only the caller's own zone changed.
    expect(await zoneOf('alice')).toBe('UTC');
  });

  it('a /me read back can be sent again: handle and org_ids are ignored', async () => {
    const user = await t.user('dora', [4]);
    const read = await user.get<{ data: Record<string, unknown> }>(ME);
    const res = await user.put(ME, { ...read.body.data, timezone: 'Asia/Tokyo', handle: 'mallory', org_ids: [1, 2, 99] });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ data: { handle: 'dora', org_ids: [4], timezone: 'Asia/Tokyo', reminders: [5] } });
    expect((await user.get(ME)).body).toEqual({ data: { handle: 'dora', org_ids: [4], timezone: 'Asia/Tokyo', reminders: [5] } });
  });

  it('refuses what is not a zone, an unknown field, an empty body or no field, and changes nothing', async () => {
    const user = await t.user('erik', [5]);
    expect((await user.put(ME, { timezone: 'Europe/Berlin' })).status).toBe(200);
    for (const zone of ['Mars/Base', 'Europe/Berlln', '+02:00', 'UTC+2', 'GMT+01:00', 'Europe/../etc/passwd']) {
      const res = await user.put<Problem>(ME, { timezone: zone });
      expect(errorPaths(res), zone).toEqual(['/timezone']);
      expect(res.body.errors[0]?.message, zone).toMatch(/^is not an IANA time zone \(such as "Europe\/Berlin" or "UTC"\)$/);
    }
    for (const zone of ['', 'A'.repeat(65), 42, null, ['UTC'], { name: 'UTC' }]) {
      expect(errorPaths(await user.put(ME, { timezone: zone })), JSON.stringify(zone)).toEqual(['/timezone']);
    }
    expect(errorPaths(await user.put(ME, { timezone: 'UTC', language: 'de' }))).toEqual(['/language']);
    const missing = await user.put<Problem>(ME, {});
    expect(errorPaths(missing)).toEqual(['/timezone']);
    expect(missing.body.errors[0]?.message).toBe('is required');
    expect(errorPaths(await user.put(ME, { handle: 'erik', org_ids: [5] }))).toEqual(['/timezone']);
    // No body at all (no Content-Type either) is no field.
    expect(errorPaths(await user.request('PUT', ME))).toEqual(['/']);
    expect(await zoneOf('erik')).toBe('Europe/Berlin');
    expect((await user.get(ME)).body).toMatchObject({ data: { timezone: 'Europe/Berlin' } });
  });

  it('needs a token like every other route', async () => {
    const res = await t.anonymous.put(ME, { timezone: 'Europe/Berlin' });
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer\b/);
  });

  /**
   * Whether GET /me answers `expected` within the auth cache's bound: another process's
   * change reaches this one by the file's data version (SQLite: the very next request) or a
   * signal (PostgreSQL: as it arrives, at most AUTH_CACHE_TTL_MS later).
   */
  async function answerWithin(user: Client, expected: unknown): Promise<boolean> {
    const deadline = performance.now() + (dialect === 'sqlite' ? 0 : AUTH_CACHE_TTL_MS);
    for (;;) {
      const res = await user.get(ME);
      if (JSON.stringify(res.body) === JSON.stringify(expected)) return true;
      if (performance.now() > deadline) return false;
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  it('a zone set by another process (the CLI) applies within the auth cache bound (SQLite: the next request)', async () => {
    const user = await t.user('fritz', [6]);
    expect((await user.get(ME)).body).toMatchObject({ data: { timezone: 'UTC' } });
    const other = openStorage({ databaseUrl: t.url });
    try {
      await createAuthService(other).addUser('fritz', [6], { timezone: 'Australia/Lord_Howe' });
      expect(await answerWithin(user, { data: { handle: 'fritz', org_ids: [6], timezone: 'Australia/Lord_Howe', reminders: [5] } })).toBe(true);
      // Adding an org without a zone keeps the one set.
      await createAuthService(other).addUser('fritz', [7]);
      expect(await answerWithin(user, { data: { handle: 'fritz', org_ids: [6, 7], timezone: 'Australia/Lord_Howe', reminders: [5] } })).toBe(true);
    } finally {
      await other.close();
    }
  });
});
