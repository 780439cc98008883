import type { Storage } from '../../storage/database.js';
import { handlesOf } from '../auth/auth.principals.js';
import { toCalendarFeed } from './calendar.model.js';

export type CalendarAdmin = ReturnType<typeof createCalendarAdmin>;

/** Operators' view of every user's calendar feeds (`focus feeds list|delete`): never a secret or its hash. */
export function createCalendarAdmin(storage: Storage) {
  return {
    async list(userId?: number) {
      let query = storage.db.selectFrom('calendar_feeds').select(['id', 'name', 'created_at', 'user_id']).orderBy('id');
      if (userId !== undefined) query = query.where('user_id', '=', userId);
      const rows = await query.execute();
      const handles = await handlesOf(storage.db, rows.map((r) => r.user_id));
      // A feed goes with its user (on delete cascade): every row has a handle.
      return { data: rows.flatMap((row) => (handles.has(row.user_id) ? [{ ...toCalendarFeed(row), handle: handles.get(row.user_id) as string }] : [])) };
    },

    /** Revokes the feed, whoever owns it (its URL is 404 from now on); false when there is none. */
    async delete(id: number): Promise<boolean> {
      const result = await storage.db.deleteFrom('calendar_feeds').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}
