import type { Storage } from '../../storage/database.js';
import { toWebhook } from './webhooks.model.js';
import { createWebhooksRepository } from './webhooks.repository.js';

export type WebhooksAdmin = ReturnType<typeof createWebhooksAdmin>;

/** Operators' view of every user's webhooks (`focus webhooks list|delete`): never a secret. */
export function createWebhooksAdmin(storage: Storage) {
  const repo = createWebhooksRepository(storage);
  return {
    async list(userId?: number) {
      let query = storage.db.selectFrom('webhooks').innerJoin('users', 'users.id', 'webhooks.user_id').selectAll('webhooks').select('users.handle').orderBy('webhooks.id');
      if (userId !== undefined) query = query.where('webhooks.user_id', '=', userId);
      const rows = await query.execute();
      return { data: rows.map((row) => ({ ...toWebhook(row), handle: row.handle })) };
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
