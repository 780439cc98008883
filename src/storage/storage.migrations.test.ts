import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, expect, it, onTestFinished } from 'vitest';
import { foldForSearch } from './columns.js';
import { type Storage, openStorage } from './database.js';
import { otherSchemaVanished } from './migrator.js';
import type { NewSession } from './tables.js';
import * as changeLog from './migrations/0008_change_log.js';
import { postgresDialect } from './postgres.js';
import { sqliteDialect } from './sqlite/sqlite.js';
import { describeEachDialect, useTestDatabase } from '../../test/helpers/harness.js';
import { sessionRow } from '../../test/helpers/session-row.js';
import { sessionIdsNamed } from '../features/sessions/sessions.test-helpers.js';

/*
 * Instances starting together on an empty database all migrate at once. Each migration
 * must run exactly once, and every instance must come up. (On PostgreSQL the other test
 * schemas of the same database also exercise Kysely's habit of looking in all schemas.)
 */
describeEachDialect('migrations from several instances at once', (dialect) => {
  const database = useTestDatabase(dialect);
  const storages: Storage[] = [];

  beforeAll(() => {
    for (let i = 0; i < 4; i++) storages.push(openStorage({ databaseUrl: database.url, poolSize: 2 }));
  });
  afterAll(async () => {
    for (const s of storages) await s.close();
  });

  it('applies each migration once and lets every instance start', async () => {
    const applied = await Promise.all(storages.map((s) => s.migrate()));
    const all = applied.flat().sort();
    expect(all).toEqual([...new Set(all)]);
    expect(all).toContain('0001_initial');
    expect(all).toContain('0002_session_name_search');
    // And a later start finds nothing left to do.
    expect(await (storages[0] as Storage).migrate()).toEqual([]);
  });
});

/*
 * Migration numbers are handed out to work done in parallel: a database may already hold
 * 0008 when 0007 arrives (a development database, a staging server). The start must apply
 * the one it lacks, not refuse.
 */
describeEachDialect('a migration merged after a later-numbered one', (dialect) => {
  const database = useTestDatabase(dialect);

  it('is applied on the next start, once', async () => {
    const storage = openStorage({ databaseUrl: database.url });
    try {
      await storage.migrate('0006_user_timezone');
      // The database as a build without 0007 left it: 0008 applied and recorded.
      await changeLog.up(storage.db, dialect === 'sqlite' ? sqliteDialect : postgresDialect);
      await sql`insert into kysely_migration (name, timestamp) values ('0008_change_log', ${new Date().toISOString()})`.execute(storage.db);

      // 0007 and whatever came after 0008 (0010 webhooks, …), never 0008 again.
      const applied = await storage.migrate();
      expect(applied).toContain('0007_string_source_id');
      expect(applied).not.toContain('0008_change_log');
      expect(await storage.migrate()).toEqual([]);
      // 0007's column is there (on PostgreSQL, in this test's own schema).
      expect((await sql`select source_id, source_id_type from tasks`.execute(storage.db)).rows).toEqual([]);
    } finally {
      await storage.close();
    }
  });
});

/*
 * 0004_occurrence_index folds the names of the sessions already stored (sessions.search_name),
 * several hundred rows per statement: every row gets its own name folded, whatever chunk it
 * lands in, and keyword search finds them afterwards.
 */
describeEachDialect('migration 0004: names stored before it', (dialect) => {
  const database = useTestDatabase(dialect);

  it('folds every existing name, across chunks, so that keyword search finds it', async () => {
    const storage = openStorage({ databaseUrl: database.url });
    onTestFinished(() => storage.close());
    await storage.migrate('0003_session_listing_index');
    const now = '2026-01-01T00:00:00.000Z';
    const { db } = storage;
    await db.insertInto('orgs').values({ id: 1, created_at: now }).execute();
    const userId = (await db.insertInto('users').values({ handle: 'ann', created_at: now }).returning('id').executeTakeFirstOrThrow()).id;
    const special = ['Ärger im Büro', 'ΣΊΣΥΦΟΣ weekly', 'Straße planen', 'ＦＵＬＬ width'];
    const names = Array.from({ length: 1_203 }, (_, i) => special[i % 97] ?? `Weekly REVIEW ${i}`);
    // The columns 0004 adds are not there yet.
    const rows = names.map((name) => {
      const { rrule: _rrule, search_name: _search, indexed_through: _through, ...row } = sessionRow(name, userId);
      return row;
    });
    // The database as 0003 left it, not the typed schema of today.
    const asBefore = db as unknown as Kysely<{ sessions: Omit<NewSession, 'rrule' | 'search_name' | 'indexed_through'> }>;
    for (let i = 0; i < rows.length; i += 200) await asBefore.insertInto('sessions').values(rows.slice(i, i + 200)).execute();

    expect(await storage.migrate()).toContain('0004_occurrence_index');
    const stored = await db.selectFrom('sessions').select(['name', 'search_name']).orderBy('id').execute();
    expect(stored).toHaveLength(names.length);
    for (const row of stored) expect(row.search_name).toBe(foldForSearch(row.name));
    expect(stored[0]?.search_name).toBe('ärger im büro');

    const ids = await db.selectFrom('sessions').select(['id', 'name']).orderBy('id').execute();
    const idsNamed = (needle: string) => ids.filter((r) => foldForSearch(r.name).includes(foldForSearch(needle))).map((r) => r.id);
    for (const needle of ['ärger', 'σίσυφος', 'STRASSE', 'review 1202']) {
      expect((await sessionIdsNamed(storage, needle, 2_000))?.sort((a, b) => a - b)).toEqual(idsNamed(needle));
    }
  });
});

describeEachDialect('migrating while another schema of the database is dropped', (dialect) => {
  const database = useTestDatabase(dialect);

  if (dialect === 'postgres') {
    /** The error PostgreSQL itself raises for `statement`. */
    async function errorOf(storage: Storage, statement: string): Promise<unknown> {
      return sql.raw(statement).execute(storage.db).then(
        () => undefined,
        (error: unknown) => error,
      );
    }

    it('retries what Kysely read of a vanished schema or its tables, and nothing of its own', async () => {
      const storage = openStorage({ databaseUrl: database.url });
      try {
        const ours = (await sql<{ schema: string }>`select current_schema() as schema`.execute(storage.db)).rows[0]?.schema;
        // What Kysely's introspection meets when another test's schema goes away mid-read.
        const schemaGone = await errorOf(storage, 'create table gone_schema_x.t (id int)');
        const tableGone = await errorOf(storage, `select 'gone_schema_x.session_occurrences'::regclass`);
        // A column listed, then gone before its sequence was read (seen in CI: "action" of "changes").
        const columnGone = await errorOf(storage, "select pg_get_serial_sequence('pg_catalog.pg_class', 'gone_column')");
        expect(otherSchemaVanished(schemaGone, ours)).toBe(true);
        expect(otherSchemaVanished(tableGone, ours)).toBe(true);
        expect(otherSchemaVanished(columnGone, ours)).toBe(true);
        // The same SQLSTATE from a statement of ours is a real failure.
        expect(otherSchemaVanished(await errorOf(storage, 'select gone_column from pg_catalog.pg_class'), ours)).toBe(false);
        // A missing table of our own schema, or one named without a schema, is a real failure.
        expect(otherSchemaVanished(await errorOf(storage, `select '${ours}.no_such_table'::regclass`), ours)).toBe(false);
        expect(otherSchemaVanished(await errorOf(storage, 'select * from no_such_table'), ours)).toBe(false);
        expect(otherSchemaVanished(await errorOf(storage, `create table "${ours}_gone".t (id int)`), `${ours}_gone`)).toBe(false);
      } finally {
        await storage.close();
      }
    });
  } else {
    it('has one schema: a missing table is always a real failure', async () => {
      const storage = openStorage({ databaseUrl: database.url });
      try {
        const error = await sql.raw('select * from no_such_table').execute(storage.db).then(() => undefined, (e: unknown) => e);
        expect(otherSchemaVanished(error, undefined)).toBe(false);
      } finally {
        await storage.close();
      }
    });
  }
});
