import type { Storage } from '../../storage/database.js';
import type { IdempotencyKeysTable } from '../../storage/tables.js';

export type KeyRow = IdempotencyKeysTable;

export interface Claim {
  userId: number;
  key: string;
  fingerprint: string;
  /** ISO instant of this claim; it identifies the claim for completing or releasing it. */
  claimedAt: string;
  expiresAt: string;
}

export interface StoredResponse {
  status: number;
  contentType: string | null;
  location: string | null;
  body: string;
}

export type IdempotencyRepository = ReturnType<typeof createIdempotencyRepository>;

/** The stored keys of idempotent requests (contract section 7). Built once per storage. */
export function createIdempotencyRepository(storage: Storage) {
  return {
    /** Takes the key for a new request; false when a row for (user, key) exists. */
    async insertClaim(claim: Claim): Promise<boolean> {
      const inserted = await storage.db
        .insertInto('idempotency_keys')
        .values({
          user_id: claim.userId,
          key: claim.key,
          fingerprint: claim.fingerprint,
          status: null,
          content_type: null,
          location: null,
          body: null,
          claimed_at: claim.claimedAt,
          expires_at: claim.expiresAt,
        })
        .onConflict((oc) => oc.columns(['user_id', 'key']).doNothing())
        .returning('user_id')
        .executeTakeFirst();
      return inserted !== undefined;
    },

    async findKey(userId: number, key: string): Promise<KeyRow | undefined> {
      return storage.db.selectFrom('idempotency_keys').selectAll().where('user_id', '=', userId).where('key', '=', key).executeTakeFirst();
    },

    /**
     * Takes over a row that is expired or abandoned, as it was read (`seen`): of two requests
     * doing so at once, exactly one changes it.
     */
    async replaceClaim(seen: KeyRow, claim: Claim): Promise<boolean> {
      const result = await storage.db
        .updateTable('idempotency_keys')
        .set({ fingerprint: claim.fingerprint, status: null, content_type: null, location: null, body: null, claimed_at: claim.claimedAt, expires_at: claim.expiresAt })
        .where('user_id', '=', claim.userId)
        .where('key', '=', claim.key)
        .where('claimed_at', '=', seen.claimed_at)
        .where('expires_at', '=', seen.expires_at)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /** Stores the first completed response of a claim (unless it was taken over meanwhile). */
    async completeClaim(claim: Claim, response: StoredResponse, expiresAt: string): Promise<void> {
      await storage.db
        .updateTable('idempotency_keys')
        .set({ status: response.status, content_type: response.contentType, location: response.location, body: response.body, expires_at: expiresAt })
        .where('user_id', '=', claim.userId)
        .where('key', '=', claim.key)
        .where('claimed_at', '=', claim.claimedAt)
        .where('status', 'is', null)
        .execute();
    },

    /** Forgets a claim whose request failed on our side, so that a retry runs again. */
    async releaseClaim(claim: Claim): Promise<void> {
      await storage.db
        .deleteFrom('idempotency_keys')
        .where('user_id', '=', claim.userId)
        .where('key', '=', claim.key)
        .where('claimed_at', '=', claim.claimedAt)
        .where('status', 'is', null)
        .execute();
    },

    /** Deletes up to `limit` expired keys, oldest first; returns how many. */
    async purgeExpired(now: string, limit: number): Promise<number> {
      const result = await storage.db
        .deleteFrom('idempotency_keys')
        .where((eb) =>
          eb(
            eb.refTuple('user_id', 'key'),
            'in',
            eb.selectFrom('idempotency_keys').select(['user_id', 'key']).where('expires_at', '<=', now).orderBy('expires_at').limit(limit).$asTuple('user_id', 'key'),
          ),
        )
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
