import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { beforeAll, expect, it } from 'vitest';
import type { SessionFilters } from './sessions.listing-filters.js';
import { createSessionsRepository } from './sessions.repository.js';
import type { Db } from '../../storage/database.js';
import type { Database } from '../../storage/tables.js';
import { describeEachDialect, useStorageFixture } from '../../../test/helpers/harness.js';
import { sessionRow } from '../../../test/helpers/session-row.js';

const now = '2026-01-01T00:00:00.000Z';

describeEachDialect('keyword search on sessions.name', (dialect) => {
  const fixture = useStorageFixture(dialect, now);

  beforeAll(async () => {
    const { storage, user } = fixture;
    const names = [
      '100% focus', '100 percent focus', 'deep_work', 'deepXwork', 'back\\slash', 'Reading Hour', 'READING club',
      'Ärger Übung', 'Straße planen', 'Review [draft] *final*?', 'ΣΊΣΥΦΟΣ',
    ];
    await storage.db.insertInto('sessions').values(names.map((n) => sessionRow(n, user.id))).execute();
  });

  /** The first page the repository finds, in listing order, as the service reads it: keys, then rows. */
  async function page(db: Db, filters: SessionFilters, limit: number) {
    const { storage, user } = fixture;
    const keys = await createSessionsRepository({ ...storage, db: db }).keys({ user, filters, after: undefined, limit });
    const rows = await createSessionsRepository({ ...storage, db: db }).byIds(db, { ids: keys.map((k) => k.id), listing: { user, filters } });
    return keys.flatMap((k) => rows.get(k.id) ?? []);
  }

  const search = async (keyword: string) => (await page(fixture.storage.db, { orgIds: [1], keyword }, 100)).map((s) => s.name).sort();

  it('matches case-insensitively', async () => {
    expect(await search('reading')).toEqual(['READING club', 'Reading Hour']);
  });

  it('folds case for all of Unicode, the same on both databases', async () => {
    expect(await search('ärger')).toEqual(['Ärger Übung']);
    expect(await search('ÄRGER ÜB')).toEqual(['Ärger Übung']);
    expect(await search('übung')).toEqual(['Ärger Übung']);
    expect(await search('STRASSE')).toEqual(['Straße planen']);
    expect(await search('straße')).toEqual(['Straße planen']);
    expect(await search('σίσυφος')).toEqual(['ΣΊΣΥΦΟΣ']);
  });

  it('finds needles shorter than the substring index reads (one or two characters)', async () => {
    expect(await search('ä')).toEqual(['Ärger Übung']);
    expect(await search('%')).toEqual(['100% focus']);
    expect(await search('xw')).toEqual(['deepXwork']);
  });

  it('keeps %, _ and \\ literal', async () => {
    expect(await search('0%')).toEqual(['100% focus']);
    expect(await search('p_w')).toEqual(['deep_work']);
    expect(await search('P_W')).toEqual(['deep_work']);
    expect(await search('deep_')).toEqual(['deep_work']);
    expect(await search('k\\s')).toEqual(['back\\slash']);
    expect(await search('%')).toEqual(['100% focus']);
    // GLOB's own wildcards are literal too.
    expect(await search('[draft]')).toEqual(['Review [draft] *final*?']);
    expect(await search('*final*?')).toEqual(['Review [draft] *final*?']);
    expect(await search('l*?')).toEqual(['Review [draft] *final*?']);
    expect(await search('t] *')).toEqual(['Review [draft] *final*?']);
  });

  it('has a substring index on the folded name: pg_trgm on PostgreSQL, an FTS5 trigram table on SQLite', async () => {
    const { storage } = fixture;
    const names =
      dialect === 'postgres'
        ? (await sql<{ name: string }>`select indexname as name from pg_indexes where tablename = 'sessions' and schemaname = current_schema()`.execute(storage.db)).rows
        : (await sql<{ name: string }>`select name from sqlite_master where name like 'sessions_search%'`.execute(storage.db)).rows;
    expect(names.map((r) => r.name)).toContain(dialect === 'postgres' ? 'sessions_search_name_idx' : 'sessions_search');
    expect(names.map((r) => r.name)).not.toContain('sessions_name_search_idx');
  });

  if (dialect === 'postgres') {
    it('the service query uses the trigram index at 50k sessions', async () => {
      const { storage, user } = fixture;
      // Realistic size and spread: 50k names from a small vocabulary, five rare ones.
      await sql`
        insert into sessions (org_id, created_by, name, type, duration, schedule, time_minutes, timezone, starts_at, ends_at,
          is_public, status, website_blocker_enabled, snooze_enabled, snooze_apps, is_recurring, recurring_days, fallback_option,
          created_at, updated_at)
        select 1, ${user.id},
          (array['Deep work','Morning focus','Writing sprint','Code review','Study block','Planning'])[1 + g % 6] || ' #' || g,
          'standard', 25, '2026-01-02', 540, 'UTC',
          to_char(timestamp '2026-01-02 09:00' + g * interval '1 minute', 'YYYY-MM-DD"T"HH24:MI:SS".000Z"'),
          to_char(timestamp '2026-01-02 09:25' + g * interval '1 minute', 'YYYY-MM-DD"T"HH24:MI:SS".000Z"'),
          g % 2, 'waiting', 0, 0, '{}', 0, '[]', 0, ${now}, ${now}
        from generate_series(1, 50000) g
      `.execute(storage.db);
      await sql`update sessions set name = name || ' zebra' where id in (select id from sessions order by id desc limit 5)`.execute(storage.db);
      await sql`update sessions set search_name = lower(name)`.execute(storage.db);
      await sql`analyze sessions`.execute(storage.db);

      // Capture exactly the SQL the repository sends, then ask PostgreSQL how it runs it.
      const captured: { sql: string; parameters: readonly unknown[] }[] = [];
      const pool = new pg.Pool({ connectionString: fixture.database.url, max: 1 });
      const spy = new Kysely<Database>({
        dialect: new PostgresDialect({ pool }),
        log: (event) => {
          if (event.level === 'query') captured.push({ sql: event.query.sql, parameters: event.query.parameters });
        },
      });
      try {
        const rows = await page(spy, { orgIds: [1], keyword: 'ZEBRA' }, 51);
        expect(rows).toHaveLength(5);
        // The statement that searches: the per-org page of keys (the second step reads rows by id).
        const query = captured.find((q) => / limit /.test(q.sql));
        expect(query?.sql).toMatch(/search_name like/);
        const client = await pool.connect();
        try {
          const plan = await client.query<{ 'QUERY PLAN': unknown }>(`explain (format json) ${query?.sql ?? ''}`, [...(query?.parameters ?? [])]);
          const text = JSON.stringify(plan.rows[0]?.['QUERY PLAN']);
          expect(text, text).toContain('sessions_search_name_idx');
        } finally {
          client.release();
        }
      } finally {
        await spy.destroy();
      }
    });
  }
});
