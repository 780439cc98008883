import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSessionsRepository } from './sessions.repository.js';
import { sqlitePath } from '../../storage/sqlite.js';
import type { Database } from '../../storage/tables.js';
import { useStorageFixture } from '../../../test/helpers/harness.js';

/**
 * A listing page is found one org at a time in index order, then read by id. Both steps
 * only stay cheap with the right plan, which SQLite picks from its statistics: this shows
 * the plans the service's own statements get at 20,000 sessions once the statistics the
 * server refreshes at start-up are there.
 */
describe('session listing plans on SQLite', () => {
  const fixture = useStorageFixture('sqlite');
  let raw: BetterSqlite3.Database;

  beforeAll(async () => {
    const { storage, user } = fixture;
    await storage.db.insertInto('orgs').values({ id: 2, created_at: '2026-01-01T00:00:00.000Z' }).execute();
    await sql`
      with recursive g(n) as (select 1 union all select n + 1 from g where n < 20000)
      insert into sessions (org_id, created_by, name, type, duration, schedule, time_minutes, timezone, starts_at, ends_at,
        is_public, status, website_blocker_enabled, snooze_enabled, snooze_apps, is_recurring, recurring_days, fallback_option,
        created_at, updated_at)
      select 1 + n % 2, ${user.id}, 'session ' || n || (case when n % 12 = 0 then ' review' else '' end), 'standard', 25,
        '2026-01-02', 540, 'UTC', printf('2026-01-02T%02d:%02d:00.000Z', n / 60 % 24, n % 60), '2026-01-02T23:59:00.000Z',
        n % 2, 'waiting', 0, 0, '{}', 0, '[]', 0, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z'
      from g
    `.execute(storage.db);
    await storage.refreshStatistics();
    raw = new BetterSqlite3(sqlitePath(fixture.database.url), { readonly: true });
  });
  afterAll(() => raw.close());

  async function plansOf(keyword?: string): Promise<{ sql: string; plan: string }[]> {
    const captured: { sql: string; parameters: readonly unknown[] }[] = [];
    const spy = new Kysely<Database>({
      dialect: new SqliteDialect({ database: new BetterSqlite3(sqlitePath(fixture.database.url)) }),
      log: (event) => {
        if (event.level === 'query') captured.push({ sql: event.query.sql, parameters: event.query.parameters });
      },
    });
    try {
      const user = { ...fixture.user, orgIds: [1, 2] };
      const filters = { orgIds: [1, 2], ...(keyword === undefined ? {} : { keyword }) };
      const keys = await createSessionsRepository({ ...fixture.storage, db: spy }).keys({ user, filters, after: undefined, limit: 101 });
      expect(keys).toHaveLength(101);
      expect((await createSessionsRepository({ ...fixture.storage, db: spy }).byIds({ user, filters, ids: keys.map((k) => k.id) })).size).toBe(101);
    } finally {
      await spy.destroy();
    }
    return captured.map((q) => ({
      sql: q.sql,
      plan: raw
        .prepare(`explain query plan ${q.sql}`)
        .all(...q.parameters)
        .map((r) => (r as { detail: string }).detail)
        .join(' | '),
    }));
  }

  it.each([undefined, 'review'])('keyword %s: each org walked in index order, the page read by primary key', async (keyword) => {
    const plans = await plansOf(keyword);
    const keys = plans.filter((p) => / limit /.test(p.sql));
    expect(keys).toHaveLength(2);
    for (const { plan } of keys) {
      expect(plan).toMatch(/USING COVERING INDEX sessions_org_listing_idx \(org_id=\?\)/);
      expect(plan).not.toMatch(/TEMP B-TREE/);
    }
    const page = plans.filter((p) => !/ limit /.test(p.sql));
    expect(page).toHaveLength(1);
    expect(page[0]?.plan).toMatch(/SEARCH sessions USING INTEGER PRIMARY KEY/);
  });
});
