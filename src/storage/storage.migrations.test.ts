import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Storage, openStorage } from './database.js';
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
