import type { Storage } from '../../storage/database.js';
import { handlesOf } from '../auth/auth.principals.js';
import { toWebhook } from './webhooks.model.js';
import { createWebhooksRepository } from './webhooks.repository.js';

export type WebhooksAdmin = ReturnType<typeof createWebhooksAdmin>;

/** Operators' view of every user's webhooks (`focus webhooks list|delete`): never a secret. */
export function createWebhooksAdmin(storage: Storage) {
  const repo = createWebhooksRepository(storage);
  return {
    async list(userId?: number) {
      let query = storage.db.selectFrom('webhooks').selectAll().orderBy('id');
      if (userId !== undefined) query = query.where('user_id', '=', userId);
      const rows = await query.execute();
      const handles = await handlesOf(storage.db, rows.map((r) => r.user_id));
      // A webhook goes with its user (on delete cascade): every row has a handle.
      return { data: rows.flatMap((row) => (handles.has(row.user_id) ? [{ ...toWebhook(row), handle: handles.get(row.user_id) as string }] : [])) };
    },

    /** Deletes the webhook and its queue, whoever owns it; false when there is none. */
    async delete(id: number): Promise<boolean> {
      return storage.transaction(async (trx) => {
        const row = await trx.selectFrom('webhooks').select('user_id').where('id', '=', id).executeTakeFirst();
        return row !== undefined && repo.remove(trx, { userId: row.user_id, id });
      });
    },
  };
}
