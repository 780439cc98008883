import type { Db, Storage } from '../../storage/database.js';
import type { CalendarFeedRow } from '../../storage/tables.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { principalsOf } from '../auth/auth.principals.js';

export type CalendarRepository = ReturnType<typeof createCalendarRepository>;

const FEED_COLUMNS = ['id', 'name', 'created_at'] as const;

/** Calendar feeds (the sessions a feed shows come from the sessions api). Built once per storage. */
export function createCalendarRepository(storage: Storage) {
  return {
    async insert(db: Db, q: { userId: number; name: string; secretHash: string; now: string }): Promise<Pick<CalendarFeedRow, 'id' | 'name' | 'created_at'>> {
      return db
        .insertInto('calendar_feeds')
        .values({ user_id: q.userId, name: q.name, secret_hash: q.secretHash, created_at: q.now })
        .returning([...FEED_COLUMNS])
        .executeTakeFirstOrThrow();
    },

    async countOf(db: Db, userId: number): Promise<number> {
      const row = await db.selectFrom('calendar_feeds').select((eb) => eb.fn.countAll<number | string>().as('n')).where('user_id', '=', userId).executeTakeFirst();
      return Number(row?.n ?? 0);
    },

    /** The user's feeds, oldest first; `limit` bounds the answer whatever the table holds. */
    listOf(userId: number, limit: number) {
      return storage.db.selectFrom('calendar_feeds').select([...FEED_COLUMNS]).where('user_id', '=', userId).orderBy('id').limit(limit).execute();
    },

    /** Deletes the user's feed `id`; false when the user has no such feed (another user's included). */
    async deleteOwned(db: Db, q: { userId: number; id: number }): Promise<boolean> {
      const result = await db.deleteFrom('calendar_feeds').where('id', '=', q.id).where('user_id', '=', q.userId).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    /** The feed whose secret hashes to `secretHash`, with its user as the API sees callers (memberships read now); undefined when there is none or its user is disabled. */
    async findByHash(secretHash: string): Promise<{ name: string; user: AuthenticatedUser } | undefined> {
      const row = await storage.db.selectFrom('calendar_feeds').select(['name', 'user_id']).where('secret_hash', '=', secretHash).executeTakeFirst();
      // A disabled user's feeds answer as a revoked one does (contract section 13).
      const user = row === undefined ? undefined : (await principalsOf(storage.db, [row.user_id], { enabledOnly: true })).get(row.user_id);
      return row === undefined || user === undefined ? undefined : { name: row.name, user };
    },
  };
}
