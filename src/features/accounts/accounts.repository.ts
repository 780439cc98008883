import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../../storage/database.js';

/** An invitation's secret: 32 random bytes, base64url; only its SHA-256 is stored. */
export const newSecret = () => randomBytes(32).toString('base64url');
export const hashSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');

export type InviteStatus = 'pending' | 'accepted' | 'revoked' | 'expired';

export interface InviteRow {
  id: number;
  org_id: number;
  created_at: string;
  expires_at: string;
  used_at: string | null;
  revoked_at: string | null;
}

export function inviteStatus(row: InviteRow, now: string): InviteStatus {
  if (row.used_at !== null) return 'accepted';
  if (row.revoked_at !== null) return 'revoked';
  return row.expires_at <= now ? 'expired' : 'pending';
}

const COLUMNS = ['id', 'org_id', 'created_at', 'expires_at', 'used_at', 'revoked_at'] as const;

/** The invitations table: the accounts feature's own. */
export const invitesRepository = {
  async insert(db: Db, q: { orgId: number; secretHash: string; createdBy: number | null; now: string; expiresAt: string }): Promise<number> {
    const row = await db
      .insertInto('invites')
      .values({ org_id: q.orgId, secret_hash: q.secretHash, created_by: q.createdBy, created_at: q.now, expires_at: q.expiresAt })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  },

  /** The org's invitations, newest first (at most 200: old ones matter little). */
  list: (db: Db, orgId: number): Promise<InviteRow[]> =>
    db.selectFrom('invites').select(COLUMNS).where('org_id', '=', orgId).orderBy('id', 'desc').limit(200).execute(),

  /** Revokes a pending invitation of the org; false when there is none such. */
  async revoke(db: Db, q: { orgId: number; id: number; now: string }): Promise<boolean> {
    const result = await db
      .updateTable('invites')
      .set({ revoked_at: q.now })
      .where('id', '=', q.id)
      .where('org_id', '=', q.orgId)
      .where('used_at', 'is', null)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  byHash: (db: Db, secretHash: string): Promise<InviteRow | undefined> =>
    db.selectFrom('invites').select(COLUMNS).where('secret_hash', '=', secretHash).executeTakeFirst(),

  /**
   * Marks a pending invitation used, in one statement that only a pending one passes:
   * of two accepts racing for one link, exactly one wins.
   */
  async use(db: Db, q: { id: number; userId: number; now: string }): Promise<boolean> {
    const result = await db
      .updateTable('invites')
      .set({ used_at: q.now, used_by: q.userId })
      .where('id', '=', q.id)
      .where('used_at', 'is', null)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', q.now)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },
};
