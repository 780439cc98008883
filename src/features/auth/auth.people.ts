import type { Db, Storage } from '../../storage/database.js';
import type { TokenKind } from './auth.caller.js';
import { AUTH_CHANNEL } from './auth.repository.js';

export type Role = 'admin' | 'member';

/** A credential as its owner sees it listed: never the token or its hash. */
export interface CredentialRow {
  id: number;
  kind: TokenKind;
  name: string | null;
  client: string | null;
  scopes: string | null;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
}

/**
 * The statements of people management (contract section 12) on auth's tables: roles,
 * passwords, members and a user's own credentials. Every change of what a token lookup
 * answers is signalled on the auth channel, in the writing transaction.
 */
export function createPeopleRepository(storage: Storage) {
  const changed: Changed = (db, payload) => storage.signals.publish(db, AUTH_CHANNEL, payload);
  return { ...membershipStatements(storage, changed), ...userStatements(), ...credentialStatements(changed) };
}

export type PeopleRepository = ReturnType<typeof createPeopleRepository>;

/** Signals a change of what a token lookup answers, in the writing transaction. */
type Changed = (db: Db, payload: string) => ReturnType<Storage['signals']['publish']>;

/** Orgs, memberships and roles. */
function membershipStatements(storage: Storage, changed: Changed) {
  return {
    /**
     * The org's admins, their membership rows locked until the transaction ends, in user id
     * order: every transaction that changes the org's people locks them first, in one order.
     */
    async lockAdmins(db: Db, orgId: number): Promise<number[]> {
      const rows = await storage.forUpdate(db.selectFrom('memberships').select('user_id').where('org_id', '=', orgId).where('role', '=', 'admin').orderBy('user_id')).execute();
      return rows.map((r) => r.user_id);
    },

    /** The user's role in the org, or undefined when they are not a member. */
    async roleOf(db: Db, userId: number, orgId: number): Promise<Role | undefined> {
      const row = await db.selectFrom('memberships').select('role').where('user_id', '=', userId).where('org_id', '=', orgId).executeTakeFirst();
      return row?.role;
    },

    async setRole(db: Db, q: { userId: number; orgId: number; role: Role }): Promise<void> {
      await db.updateTable('memberships').set({ role: q.role }).where('user_id', '=', q.userId).where('org_id', '=', q.orgId).execute();
    },

    /** Adds the membership (an existing one keeps its role); the org is created when missing. */
    async addMember(db: Db, q: { userId: number; orgId: number; role: Role; now: string }): Promise<void> {
      await db.insertInto('orgs').values({ id: q.orgId, created_at: q.now }).onConflict((oc) => oc.column('id').doNothing()).execute();
      await db
        .insertInto('memberships')
        .values({ user_id: q.userId, org_id: q.orgId, role: q.role })
        .onConflict((oc) => oc.columns(['user_id', 'org_id']).doNothing())
        .execute();
      await changed(db, `user:${q.userId}`);
    },

    /** Ends the membership, signalled so that token lookups and streams drop the org at once; false when there was none. */
    async removeMember(db: Db, q: { userId: number; orgId: number }): Promise<boolean> {
      const result = await db.deleteFrom('memberships').where('user_id', '=', q.userId).where('org_id', '=', q.orgId).executeTakeFirst();
      await changed(db, `user:${q.userId}`);
      return Number(result.numDeletedRows) > 0;
    },

    async orgExists(db: Db, orgId: number): Promise<boolean> {
      return (await db.selectFrom('orgs').select('id').where('id', '=', orgId).executeTakeFirst()) !== undefined;
    },


    /** The org's members by handle, with their roles. */
    async members(db: Db, orgId: number): Promise<{ handle: string; role: Role }[]> {
      return db
        .selectFrom('memberships')
        .innerJoin('users', 'users.id', 'memberships.user_id')
        .select(['users.handle', 'memberships.role'])
        .where('memberships.org_id', '=', orgId)
        .orderBy('users.handle')
        .execute();
    },
  };
}

/** Users: lookups and email. */
function userStatements() {
  return {
    async userByHandle(db: Db, handle: string) {
      return db.selectFrom('users').select(['id', 'handle', 'password_hash', 'disabled_at']).where('handle', '=', handle).executeTakeFirst();
    },

    async userByEmail(db: Db, email: string) {
      return db.selectFrom('users').select(['id', 'handle', 'disabled_at']).where('email', '=', email).executeTakeFirst();
    },

    async setEmail(db: Db, q: { userId: number; email: string | null }): Promise<void> {
      await db.updateTable('users').set({ email: q.email }).where('id', '=', q.userId).execute();
    },

    /** Creates a user with a password; undefined when the handle is taken. */
    async createUser(db: Db, q: { handle: string; passwordHash: string | null; now: string; email?: string }): Promise<number | undefined> {
      const row = await db
        .insertInto('users')
        .values({ handle: q.handle, created_at: q.now, password_hash: q.passwordHash, ...(q.email === undefined ? {} : { email: q.email }) })
        .onConflict((oc) => oc.column('handle').doNothing())
        .returning('id')
        .executeTakeFirst();
      return row?.id;
    },
  };
}

/** A user's own credentials. */
function credentialStatements(changed: Changed) {
  return {
    /** The user's credentials of these kinds that are neither revoked nor expired, oldest first. */
    async credentials(db: Db, q: { userId: number; kinds: readonly TokenKind[]; now: string }): Promise<CredentialRow[]> {
      return db
        .selectFrom('tokens')
        .select(['id', 'kind', 'name', 'client', 'scopes', 'created_at', 'expires_at', 'last_used_at'])
        .where('user_id', '=', q.userId)
        .where('kind', 'in', [...q.kinds])
        .where('revoked_at', 'is', null)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', q.now)]))
        .orderBy('id')
        .execute();
    },

    /**
     * A new password: every browser session of the user ends but `keep` (the one asking, if a
     * browser); API tokens stay. Run in a transaction, so neither happens without the other.
     */
    async replacePassword(db: Db, q: { userId: number; passwordHash: string; keep: number | undefined; at: string }): Promise<void> {
      await db.updateTable('users').set({ password_hash: q.passwordHash }).where('id', '=', q.userId).execute();
      let sessions = db.updateTable('tokens').set({ revoked_at: q.at }).where('user_id', '=', q.userId).where('kind', '=', 'session').where('revoked_at', 'is', null);
      if (q.keep !== undefined) sessions = sessions.where('id', '<>', q.keep);
      await sessions.execute();
      await changed(db, `user:${q.userId}`);
    },

    /** Revokes the user's own credential of one of these kinds; false when there is none such. */
    async revokeCredential(db: Db, q: { userId: number; id: number; kinds: readonly TokenKind[]; at: string }): Promise<boolean> {
      const result = await db
        .updateTable('tokens')
        .set({ revoked_at: q.at })
        .where('id', '=', q.id)
        .where('user_id', '=', q.userId)
        .where('kind', 'in', [...q.kinds])
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      await changed(db, `token:${q.id}`);
      return Number(result.numUpdatedRows) > 0;
    },
  };
}
