import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Storage, openStorage } from './database.js';
import * as changeLog from './migrations/0008_change_log.js';
import { postgresDialect } from './postgres.js';
import { sqliteDialect } from './sqlite.js';
import { describeEachDialect, useTestDatabase } from '../../test/helpers/harness.js';

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

      // 0007 runs though a later number was applied; 0008 does not run again (later-numbered ones may run too).
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
