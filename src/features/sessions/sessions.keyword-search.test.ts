import { CompiledQuery, sql } from 'kysely';
import { beforeAll, expect, it } from 'vitest';
import type { SessionFilters } from './sessions.listing-filters.js';
import { createSessionsRepository } from './sessions.repository.js';
import { sessionIdsNamed } from './sessions.name-search.js';
import { type Storage, openStorage } from '../../storage/database.js';
import { describeEachDialect, useStorageFixture } from '../../../test/helpers/harness.js';
import { StatementCapture } from '../../../test/helpers/statements.js';
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

  /**
   * The first page the repository finds, in listing order, as the service reads it: keys,
   * then rows. `through`: the sessions the substring index found (the listing's way for a
   * rare keyword), or each row read tested (its way for a common one or a short needle).
   */
  async function page(storage: Storage, filters: SessionFilters, limit: number, through: 'index' | 'rows') {
    const { user } = fixture;
    const repo = createSessionsRepository(storage);
    const named = through === 'index' && filters.keyword !== undefined ? await sessionIdsNamed(storage, filters.keyword, 1000) : undefined;
    const f = named === undefined ? filters : { ...filters, named };
    const keys = await repo.keys({ user, filters: f, after: undefined, limit });
    const rows = await repo.byIds(storage.db, { ids: keys.map((k) => k.id), listing: { user, filters: f } });
    return keys.flatMap((k) => rows.get(k.id) ?? []);
  }

  /** The names a keyword finds, the same both ways. */
  const search = async (keyword: string) => {
    const [indexed, scanned] = await Promise.all(
      (['index', 'rows'] as const).map(async (through) => (await page(fixture.storage, { orgIds: [1], keyword }, 100, through)).map((s) => s.name).sort()),
    );
    expect(indexed).toEqual(scanned);
    return indexed;
  };

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

      // Capture exactly the statements storage sends, then ask PostgreSQL how it runs them.
      const capture = new StatementCapture();
      const spied = openStorage({ databaseUrl: fixture.database.url }, { plugins: [capture] });
      try {
        const named = await sessionIdsNamed(spied, 'ZEBRA', 1000);
        expect(named).toHaveLength(5);
        expect(await page(spied, { orgIds: [1], keyword: 'ZEBRA', named }, 51, 'rows')).toHaveLength(5);
        const lookup = capture.compiled(storage.db).find((q) => /search_name like/.test(q.sql));
        expect(lookup).toBeDefined();
        const plan = await storage.db.executeQuery<{ 'QUERY PLAN': unknown }>(CompiledQuery.raw(`explain (format json) ${lookup?.sql ?? ''}`, [...(lookup?.parameters ?? [])]));
        const text = JSON.stringify(plan.rows[0]?.['QUERY PLAN']);
        expect(text, text).toContain('sessions_search_name_idx');
      } finally {
        await spied.close();
      }
    });
  }
});
