import { expect, it } from 'vitest';
import { createSessionsRepository } from './sessions.repository.js';
import { describeEachDialect, useStorageFixture } from '../../../test/helpers/harness.js';
import { sessionRow } from '../../../test/helpers/session-row.js';

const now = '2026-01-01T00:00:00.000Z';

/**
 * A listing finds its page of keys first and reads the rows afterwards; whatever changes
 * in between, a row is only returned if it still qualifies when read.
 */
describeEachDialect('session pages are checked again when read', (dialect) => {
  const fixture = useStorageFixture(dialect, now);

  it('leaves out a session made private, renamed away from the keyword or deleted after the page was found', async () => {
    const { storage, user } = fixture;
    const other = await storage.db.insertInto('users').values({ handle: 'bob', created_at: now }).returning('id').executeTakeFirstOrThrow();
    await storage.db.insertInto('memberships').values({ user_id: other.id, org_id: 1 }).execute();
    const ids = [];
    for (const [name, owner, pub] of [['focus one', user.id, 0], ['focus two', other.id, 1], ['focus three', other.id, 1], ['focus four', other.id, 1]] as const) {
      ids.push((await storage.db.insertInto('sessions').values(sessionRow(name, owner, { is_public: pub })).returning('id').executeTakeFirstOrThrow()).id);
    }
    const filters = { orgIds: [1], keyword: 'focus' };
    const repo = createSessionsRepository(storage);
    const keys = await repo.keys({ user, filters, after: undefined, limit: 10 });
    expect(keys.map((k) => k.id)).toEqual(ids);

    const [mine, madePrivate, renamed, deleted] = ids as [number, number, number, number];
    await storage.db.updateTable('sessions').set({ is_public: 0 }).where('id', '=', madePrivate).execute();
    await storage.db.updateTable('sessions').set({ name: 'other', search_name: 'other' }).where('id', '=', renamed).execute();
    await storage.db.deleteFrom('sessions').where('id', '=', deleted).execute();

    const rows = await repo.byIds(storage.db, { ids: keys.map((k) => k.id), listing: { user, filters } });
    expect([...rows.keys()]).toEqual([mine]);
  });
});
