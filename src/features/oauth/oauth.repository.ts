import type { Db } from '../../storage/database.js';
import type { DeviceCodeStatus } from '../../storage/tables.js';

const COLUMNS = ['id', 'user_code', 'client', 'scopes', 'status', 'user_id', 'expires_at', 'polled_at', 'interval_s'] as const;

/** The device_codes table: the oauth feature's own. */
export const deviceCodes = {
  async insert(db: Db, q: { deviceCodeHash: string; userCode: string; client: string; scopes: string; now: string; expiresAt: string; interval: number }) {
    await db
      .insertInto('device_codes')
      .values({
        device_code_hash: q.deviceCodeHash,
        user_code: q.userCode,
        client: q.client,
        scopes: q.scopes,
        status: 'pending',
        created_at: q.now,
        expires_at: q.expiresAt,
        interval_s: q.interval,
      })
      .execute();
  },

  /** Frees the user codes of requests that ended long ago, so that a code can be handed out again. */
  async purge(db: Db, before: string) {
    await db.deleteFrom('device_codes').where('expires_at', '<', before).execute();
  },

  byHash: (db: Db, hash: string) => db.selectFrom('device_codes').select(COLUMNS).where('device_code_hash', '=', hash).executeTakeFirst(),
  byUserCode: (db: Db, userCode: string) => db.selectFrom('device_codes').select(COLUMNS).where('user_code', '=', userCode).executeTakeFirst(),

  async polled(db: Db, q: { id: number; at: string; interval: number }) {
    await db.updateTable('device_codes').set({ polled_at: q.at, interval_s: q.interval }).where('id', '=', q.id).execute();
  },

  /** Moves a request from one status to another; false when it was not in `from` any more (a race lost). */
  async move(db: Db, q: { id: number; from: DeviceCodeStatus; to: DeviceCodeStatus; userId?: number }): Promise<boolean> {
    const result = await db
      .updateTable('device_codes')
      .set({ status: q.to, ...(q.userId === undefined ? {} : { user_id: q.userId }) })
      .where('id', '=', q.id)
      .where('status', '=', q.from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },
};
