import type { Storage } from '../../storage/database.js';
import { toCalendarFeed } from './calendar.model.js';

export type CalendarAdmin = ReturnType<typeof createCalendarAdmin>;

/** Operators' view of every user's calendar feeds (`focus feeds list|delete`): never a secret or its hash. */
export function createCalendarAdmin(storage: Storage) {
  return {
    async list(userId?: number) {
      let query = storage.db
        .selectFrom('calendar_feeds')
        .innerJoin('users', 'users.id', 'calendar_feeds.user_id')
        .select(['calendar_feeds.id', 'calendar_feeds.name', 'calendar_feeds.created_at', 'users.handle'])
        .orderBy('calendar_feeds.id');
      if (userId !== undefined) query = query.where('calendar_feeds.user_id', '=', userId);
      const rows = await query.execute();
      return { data: rows.map((row) => ({ ...toCalendarFeed(row), handle: row.handle })) };
    },

    /** Revokes the feed, whoever owns it (its URL is 404 from now on); false when there is none. */
    async delete(id: number): Promise<boolean> {
      const result = await storage.db.deleteFrom('calendar_feeds').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}
