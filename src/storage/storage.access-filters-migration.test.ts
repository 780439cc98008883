import { expect, it } from 'vitest';
import { describeEachDialect, useUnmigratedStorage } from '../../test/helpers/harness.js';
import { sessionRow } from '../../test/helpers/session-row.js';

/*
 * 0029_session_access_filters on a database that already has sessions: every access row gets
 * its session's type, status and folded name, and the rebuilt triggers keep copying them.
 */
describeEachDialect('migration 0029_session_access_filters', (dialect) => {
  const opened = useUnmigratedStorage(dialect);

  it('fills the copies of existing ties and keeps them after', async () => {
    const { storage } = opened;
    expect((await storage.migrate('0028_public_keys_index')).at(-1)).toBe('0028_public_keys_index');
    const now = '2026-01-01T00:00:00.000Z';
    const { db } = storage;
    await db.insertInto('orgs').values({ id: 1, created_at: now }).execute();
    const [ann, ben] = await Promise.all(['ann', 'ben'].map(async (handle) => (await db.insertInto('users').values({ handle, created_at: now }).returning('id').executeTakeFirstOrThrow()).id));
    const session = (await db.insertInto('sessions').values(sessionRow('Drop In', ann as number, { type: 'drop-in', status: 'completed' })).returning('id').executeTakeFirstOrThrow()).id;
    await db.insertInto('session_collaborators').values({ session_id: session, user_id: ben as number }).execute();

    expect(await storage.migrate()).toContain('0029_session_access_filters');
    const copies = () => db.selectFrom('session_access').select(['user_id', 'type', 'status', 'search_name']).orderBy('user_id').execute();
    expect(await copies()).toEqual([
      { user_id: ann, type: 'drop-in', status: 'completed', search_name: 'drop in' },
      { user_id: ben, type: 'drop-in', status: 'completed', search_name: 'drop in' },
    ]);
    await db.updateTable('sessions').set({ type: 'standard', status: 'waiting', search_name: 'renamed' }).where('id', '=', session).execute();
    expect(await copies()).toEqual([
      { user_id: ann, type: 'standard', status: 'waiting', search_name: 'renamed' },
      { user_id: ben, type: 'standard', status: 'waiting', search_name: 'renamed' },
    ]);
  });
});
