import type { Db, Storage } from '../../storage/database.js';
import type { CalendarFeedRow, SessionRow } from '../../storage/tables.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { involvedIds } from '../sessions/sessions.listing-filters.js';
import { visibleTo } from '../sessions/sessions.visibility.js';

export type CalendarRepository = ReturnType<typeof createCalendarRepository>;

const FEED_COLUMNS = ['id', 'name', 'created_at'] as const;

/** Calendar feeds, and the sessions a feed shows. Built once per storage. */
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
      const row = await storage.db
        .selectFrom('calendar_feeds')
        .innerJoin('users', 'users.id', 'calendar_feeds.user_id')
        .select(['calendar_feeds.name', 'users.id', 'users.handle', 'users.timezone'])
        .where('calendar_feeds.secret_hash', '=', secretHash)
        // A disabled user's feeds answer as a revoked one does (contract section 13).
        .where('users.disabled_at', 'is', null)
        .executeTakeFirst();
      if (row === undefined) return undefined;
      const orgs = await storage.db.selectFrom('memberships').select('org_id').where('user_id', '=', row.id).orderBy('org_id').execute();
      return { name: row.name, user: { id: row.id, handle: row.handle, timezone: row.timezone, orgIds: orgs.map((o) => o.org_id) } };
    },

    /**
     * The sessions the user created, collaborates on or joined and can still see, the most
     * recently changed first, at most `limit`.
     */
    sessionsOf(user: AuthenticatedUser, limit: number): Promise<SessionRow[]> {
      return shownTo(user, limit).selectAll('sessions').execute();
    },

    /** What identifies each version of those sessions (id, updated_at, sequence), in the same order: a cheap fingerprint of the feed. */
    versionsOf(user: AuthenticatedUser, limit: number) {
      return shownTo(user, limit).select(['sessions.id', 'sessions.updated_at', 'sessions.sequence']).execute();
    },
  };

  /** The sessions the user created, collaborates on or joined and can still see, the most recently changed first. */
  function shownTo(user: AuthenticatedUser, limit: number) {
    return storage.db
      .selectFrom('sessions')
      .where(visibleTo(user))
      .where((eb) => eb.or([eb('sessions.created_by', '=', user.id), eb('sessions.id', 'in', involvedIds(storage.db, user))]))
      .orderBy('sessions.updated_at', 'desc')
      .orderBy('sessions.id', 'desc')
      .limit(limit);
  }
}
