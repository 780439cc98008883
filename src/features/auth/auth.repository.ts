import { LRUCache } from 'lru-cache';
import type { Db, Storage } from '../../storage/database.js';
import type { AuthenticatedUser, TokenKind } from './auth.caller.js';
import { principalsOf } from './auth.principals.js';

export interface TokenLookup {
  tokenId: number;
  userId: number;
  handle: string;
  timezone: string;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
  /** When the user was disabled (`focus users disable`); their tokens are refused while set. */
  disabledAt: string | null;
  /** What kind of credential (auth.caller.ts TokenKind), and its scopes as JSON (null: all rights). */
  kind: TokenKind;
  scopes: string | null;
  orgIds: number[];
}

interface CachedLookup {
  version: string;
  /** When the read began (ms since the epoch). */
  readAt: number;
  found: TokenLookup | undefined;
}

/** Bounds the lookups kept; the least recently used goes first. */
const CACHE_SIZE = 10_000;
/**
 * A cached lookup is served for at most this long. Signals make a revocation reach every
 * instance in milliseconds; this bounds it even if the listening connection died silently.
 */
export const AUTH_CACHE_TTL_MS = 1_000;
/** The signal channel of every write that changes what a token lookup returns. */
export const AUTH_CHANNEL = 'auth';

export type AuthRepository = ReturnType<typeof createAuthRepository>;

/** findToken: readToken behind the lookup cache (createAuthRepository says when a read is reused). */
function cachedLookups(storage: Storage, readToken: (tokenHash: string) => Promise<TokenLookup | undefined>) {
  const cache = new LRUCache<string, CachedLookup>({ max: CACHE_SIZE });
  /**
   * Reads under way, by token hash: lookups arriving meanwhile share one. Under load a read
   * waits behind the statements queued before it, and each request arriving meanwhile read
   * again (a 31-day listing at c50: p99 from arrival to the gate 18–22 ms, 6–7 ms shared).
   */
  const reading = new Map<string, { version: string; read: Promise<TokenLookup | undefined> }>();
  return async (tokenHash: string): Promise<TokenLookup | undefined> => {
    const version = storage.signals.version(AUTH_CHANNEL);
    if (version === undefined) return readToken(tokenHash);
    const now = Date.now();
    const hit = cache.get(tokenHash);
    if (hit !== undefined && hit.version === version && now - hit.readAt < AUTH_CACHE_TTL_MS) return hit.found;
    // A read begun under the same version is as fresh as one begun now could be.
    const under = reading.get(tokenHash);
    if (under !== undefined && under.version === version) return under.read;
    const entry = { version, read: readToken(tokenHash) };
    reading.set(tokenHash, entry);
    try {
      const found = await entry.read;
      cache.set(tokenHash, { version, readAt: now, found });
      return found;
    } finally {
      if (reading.get(tokenHash) === entry) reading.delete(tokenHash);
    }
  };
}

/** Users, orgs and tokens. Built once per storage: the token lookup cache lives inside. */
export function createAuthRepository(storage: Storage) {
  /**
   * The token, its user and the user's orgs in one statement (one row per org): every
   * authenticated request runs this, and a second round trip for the orgs cost as much
   * as the lookup itself.
   */
  async function readToken(tokenHash: string): Promise<TokenLookup | undefined> {
    const rows = await storage.db
      .selectFrom('tokens')
      .innerJoin('users', 'users.id', 'tokens.user_id')
      .leftJoin('memberships', 'memberships.user_id', 'users.id')
      .select([
        'tokens.id as tokenId',
        'users.id as userId',
        'users.handle as handle',
        'users.timezone as timezone',
        'tokens.expires_at as expiresAt',
        'tokens.revoked_at as revokedAt',
        'tokens.last_used_at as lastUsedAt',
        'users.disabled_at as disabledAt',
        'tokens.kind as kind',
        'tokens.scopes as scopes',
        'memberships.org_id as orgId',
      ])
      .where('tokens.token_hash', '=', tokenHash)
      .orderBy('memberships.org_id')
      .execute();
    const first = rows[0];
    if (first === undefined) return undefined;
    const { orgId: _orgId, ...token } = first;
    return { ...token, orgIds: rows.flatMap((r) => (r.orgId === null ? [] : [r.orgId])) };
  }

  /** Every write below that changes a lookup's answer signals it, inside its transaction when it has one. */
  const changed = (db: Db, payload: string) => storage.signals.publish(db, AUTH_CHANNEL, payload);

  return {
    /** Moves whenever a token, user or membership may have changed (see Signals.version); undefined when that cannot be told. */
    revision: () => storage.signals.version(AUTH_CHANNEL),

    /**
     * The token row with its user and orgs. A read is reused for up to AUTH_CACHE_TTL_MS
     * while the auth channel's signal version is unchanged: a revocation, a new token or
     * membership, or a changed home zone, committed by this process or any other (the CLI),
     * moves it, so the next request reads afresh. Where storage cannot tell (PostgreSQL's
     * listening connection is down), every call reads. The version is taken before the
     * read, so a read that raced a change is never served after the change is known; lookups
     * arriving while a read under the same version is under way share it.
     */
    findToken: cachedLookups(storage, readToken),

    /**
     * Those of the token hashes that are neither revoked nor expired at `now`, and whose user
     * is not disabled, each with its user's orgs now: one statement for many (the event streams' check).
     */
    async activeTokens(hashes: readonly string[], now: string): Promise<Map<string, number[]>> {
      const out = new Map<string, number[]>();
      if (hashes.length === 0) return out;
      const rows = await storage.db
        .selectFrom('tokens')
        .innerJoin('users', 'users.id', 'tokens.user_id')
        .leftJoin('memberships', 'memberships.user_id', 'tokens.user_id')
        .select(['tokens.token_hash', 'memberships.org_id'])
        .where('tokens.token_hash', 'in', [...hashes])
        .where('tokens.revoked_at', 'is', null)
        .where('users.disabled_at', 'is', null)
        .where((eb) => eb.or([eb('tokens.expires_at', 'is', null), eb('tokens.expires_at', '>', now)]))
        .orderBy('memberships.org_id')
        .execute();
      for (const r of rows) {
        const orgs = out.get(r.token_hash) ?? [];
        if (r.org_id !== null) orgs.push(r.org_id);
        out.set(r.token_hash, orgs);
      }
      return out;
    },

    /** Principals (user and memberships) of many users at once, by id (auth.principals.ts). */
    principals: (userIds: readonly number[]): Promise<Map<number, AuthenticatedUser>> => principalsOf(storage.db, userIds),

    /** Records use of the token; `found` (maybe a cached lookup) carries the new time, so concurrent requests do not write it again. */
    async touchToken(db: Db, found: TokenLookup, at: string, slideTo?: string): Promise<void> {
      found.lastUsedAt = at;
      if (slideTo !== undefined) found.expiresAt = slideTo;
      await db.updateTable('tokens').set({ last_used_at: at, ...(slideTo === undefined ? {} : { expires_at: slideTo }) }).where('id', '=', found.tokenId).execute();
    },

    ...userAdministration(changed),
  };
}

/** Users, orgs and tokens as the administrative commands change and list them; `changed` signals each write that changes a token lookup. */
function userAdministration(changed: (db: Db, payload: string) => Promise<void>) {
  return {
    async orgIdsOf(db: Db, userId: number): Promise<number[]> {
      const rows = await db.selectFrom('memberships').select('org_id').where('user_id', '=', userId).orderBy('org_id').execute();
      return rows.map((r) => r.org_id);
    },

    /** The ids of an org's members (read through memberships_org_idx). */
    async memberIdsOf(db: Db, orgId: number): Promise<number[]> {
      const rows = await db.selectFrom('memberships').select('user_id').where('org_id', '=', orgId).execute();
      return rows.map((r) => r.user_id);
    },

    async findUserByHandle(db: Db, handle: string): Promise<{ id: number; handle: string; disabled_at: string | null } | undefined> {
      return db.selectFrom('users').select(['id', 'handle', 'disabled_at']).where('handle', '=', handle).executeTakeFirst();
    },

    /** Disables (`at`) or enables (null) the user; a disable keeps the first instant. Signalled: every cached lookup of their tokens is stale. */
    async setDisabled(db: Db, q: { userId: number; at: string | null }): Promise<void> {
      let update = db.updateTable('users').set({ disabled_at: q.at }).where('id', '=', q.userId);
      if (q.at !== null) update = update.where('disabled_at', 'is', null);
      await update.execute();
      await changed(db, `user:${q.userId}`);
    },

    /**
     * Creates the user and orgs when missing and adds the memberships; idempotent. With a
     * `timezone` the user has that home zone afterwards; without one a new user gets the
     * default and an existing one keeps theirs.
     */
    async upsertUserWithOrgs(db: Db, q: { handle: string; orgIds: readonly number[]; now: string; timezone?: string }): Promise<number> {
      const { timezone } = q;
      await db
        .insertInto('users')
        .values({ handle: q.handle, created_at: q.now, ...(timezone === undefined ? {} : { timezone }) })
        .onConflict((oc) => (timezone === undefined ? oc.column('handle').doNothing() : oc.column('handle').doUpdateSet({ timezone })))
        .execute();
      const user = await db.selectFrom('users').select('id').where('handle', '=', q.handle).executeTakeFirst();
      if (user === undefined) throw new Error('user vanished after insert');
      for (const orgId of q.orgIds) {
        await db.insertInto('orgs').values({ id: orgId, created_at: q.now }).onConflict((oc) => oc.column('id').doNothing()).execute();
        await db
          .insertInto('memberships')
          .values({ user_id: user.id, org_id: orgId })
          .onConflict((oc) => oc.columns(['user_id', 'org_id']).doNothing())
          .execute();
      }
      await changed(db, `user:${user.id}`);
      return user.id;
    },

    async setTimezone(db: Db, q: { userId: number; timezone: string }): Promise<void> {
      await db.updateTable('users').set({ timezone: q.timezone }).where('id', '=', q.userId).execute();
      await changed(db, `user:${q.userId}`);
    },

    ...tokenAdministration(changed),
  };
}

/** Tokens as the administrative commands issue, revoke and list them, and the user listing. */
function tokenAdministration(changed: (db: Db, payload: string) => Promise<void>) {
  return {
    async insertToken(
      db: Db,
      values: { userId: number; name: string | null; tokenHash: string; createdAt: string; expiresAt: string | null; kind?: TokenKind; scopes?: string | null; client?: string | null },
    ): Promise<number> {
      const row = await db
        .insertInto('tokens')
        .values({
          user_id: values.userId,
          name: values.name,
          token_hash: values.tokenHash,
          created_at: values.createdAt,
          expires_at: values.expiresAt,
          kind: values.kind ?? 'cli',
          scopes: values.scopes ?? null,
          client: values.client ?? null,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      // An unknown token's lookup is cached too: the new token must not stay unknown.
      await changed(db, `token:${row.id}`);
      return row.id;
    },

    /** Marks the token revoked; false when no such token exists. Revoking twice keeps the first time. */
    async revokeToken(db: Db, q: { tokenId: number; at: string }): Promise<boolean> {
      const exists = await db.selectFrom('tokens').select('id').where('id', '=', q.tokenId).executeTakeFirst();
      if (exists === undefined) return false;
      await db.updateTable('tokens').set({ revoked_at: q.at }).where('id', '=', q.tokenId).where('revoked_at', 'is', null).execute();
      await changed(db, `token:${q.tokenId}`);
      return true;
    },

    async countUsers(db: Db): Promise<number> {
      const row = await db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      return Number(row.n);
    },

    /** Every user with their org ids and home zone, by handle: one statement, one row per membership. */
    async listUsersWithOrgs(db: Db): Promise<{ handle: string; orgIds: number[]; timezone: string; disabled: boolean }[]> {
      const rows = await db
        .selectFrom('users')
        .leftJoin('memberships', 'memberships.user_id', 'users.id')
        .select(['users.handle', 'users.timezone', 'users.disabled_at', 'memberships.org_id'])
        .orderBy('users.handle')
        .orderBy('memberships.org_id')
        .execute();
      const users = new Map<string, { handle: string; orgIds: number[]; timezone: string; disabled: boolean }>();
      for (const row of rows) {
        let user = users.get(row.handle);
        if (user === undefined) users.set(row.handle, (user = { handle: row.handle, orgIds: [], timezone: row.timezone, disabled: row.disabled_at !== null }));
        if (row.org_id !== null) user.orgIds.push(row.org_id);
      }
      return [...users.values()];
    },

    /** Tokens (never their hashes), oldest first; only one user's when userId is given. */
    async listTokens(db: Db, userId?: number) {
      let query = db
        .selectFrom('tokens')
        .innerJoin('users', 'users.id', 'tokens.user_id')
        .select(['tokens.id', 'users.handle', 'tokens.name', 'tokens.created_at', 'tokens.expires_at', 'tokens.last_used_at', 'tokens.revoked_at'])
        .where('tokens.kind', '!=', 'session')
        .orderBy('tokens.id');
      if (userId !== undefined) query = query.where('tokens.user_id', '=', userId);
      return query.execute();
    },
  };
}
