import { expect, it } from 'vitest';
import { describeEachDialect, useUnmigratedStorage } from '../../test/helpers/harness.js';
import { MIGRATION_TEST_NOW as now, migratedWithUsers } from '../../test/helpers/migration-start.js';
import { sessionRow } from '../../test/helpers/session-row.js';

/*
 * 0029_session_access_filters, 0030_dated_page_probes and 0031_own_private_occurrences on a
 * database that already has sessions: every access row gets its session's type, status, folded
 * name, is_recurring and creator, and the rebuilt triggers keep copying them.
 */
describeEachDialect('migrations 0029 to 0031 (session_access copies)', (dialect) => {
  const opened = useUnmigratedStorage(dialect);

  it('fills the copies of existing ties and keeps them after', async () => {
    const { storage } = opened;
    const [ann, ben] = await migratedWithUsers(storage, '0028_public_keys_index', ['ann', 'ben']);
    const { db } = storage;
    const session = (await db.insertInto('sessions').values(sessionRow('Drop In', ann as number, { type: 'drop-in', status: 'completed', is_recurring: 1 })).returning('id').executeTakeFirstOrThrow()).id;
    await db.insertInto('session_collaborators').values({ session_id: session, user_id: ben as number }).execute();

    expect(await storage.migrate()).toEqual(expect.arrayContaining(['0029_session_access_filters', '0030_dated_page_probes', '0031_own_private_occurrences']));
    const copies = () => db.selectFrom('session_access').select(['user_id', 'type', 'status', 'search_name', 'is_recurring', 'created_by']).orderBy('user_id').execute();
    expect(await copies()).toEqual([
      { user_id: ann, type: 'drop-in', status: 'completed', search_name: 'drop in', is_recurring: 1, created_by: ann },
      { user_id: ben, type: 'drop-in', status: 'completed', search_name: 'drop in', is_recurring: 1, created_by: ann },
    ]);
    await db.updateTable('sessions').set({ type: 'standard', status: 'waiting', search_name: 'renamed', is_recurring: 0 }).where('id', '=', session).execute();
    expect(await copies()).toEqual([
      { user_id: ann, type: 'standard', status: 'waiting', search_name: 'renamed', is_recurring: 0, created_by: ann },
      { user_id: ben, type: 'standard', status: 'waiting', search_name: 'renamed', is_recurring: 0, created_by: ann },
    ]);
    // A new creator (nothing in the service does this; the triggers keep up anyway): ann's only tie goes, ben's copy names ben,
    // and so does the occurrence row, which decides whose own private occurrence it is (0031).
    await db
      .insertInto('session_occurrences')
      .values({ session_id: session, occurrence_date: '2026-01-02', org_id: 1, created_by: ann as number, is_public: 0, type: 'standard', completed: 0, starts_at: now, ends_at: now, day: '2026-01-02' })
      .execute();
    await db.updateTable('sessions').set({ created_by: ben as number }).where('id', '=', session).execute();
    expect(await copies()).toEqual([{ user_id: ben, type: 'standard', status: 'waiting', search_name: 'renamed', is_recurring: 0, created_by: ben }]);
    expect(await db.selectFrom('session_occurrences').select('created_by').where('session_id', '=', session).execute()).toEqual([{ created_by: ben }]);
  });
});
