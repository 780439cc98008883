import type { Db } from '../../storage/database.js';

export interface AuthenticatedUser {
  id: number;
  handle: string;
  orgIds: number[];
}

export interface TokenLookup {
  tokenId: number;
  userId: number;
  handle: string;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

/**
 * The token, its user and the user's orgs in one statement (one row per org): every
 * authenticated request runs this, and a second round trip for the orgs cost as much
 * as the lookup itself. Read fresh each time, so a revocation applies to the next request.
 */
export async function findTokenWithOrgs(db: Db, tokenHash: string): Promise<(TokenLookup & { orgIds: number[] }) | undefined> {
  const rows = await db
    .selectFrom('tokens')
    .innerJoin('users', 'users.id', 'tokens.user_id')
    .leftJoin('memberships', 'memberships.user_id', 'users.id')
    .select([
      'tokens.id as tokenId',
      'users.id as userId',
      'users.handle as handle',
      'tokens.expires_at as expiresAt',
      'tokens.revoked_at as revokedAt',
      'tokens.last_used_at as lastUsedAt',
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

export async function orgIdsOf(db: Db, userId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('memberships')
    .select('org_id')
    .where('user_id', '=', userId)
    .orderBy('org_id')
    .execute();
  return rows.map((r) => r.org_id);
}

export async function touchToken(db: Db, tokenId: number, at: string): Promise<void> {
  await db.updateTable('tokens').set({ last_used_at: at }).where('id', '=', tokenId).execute();
}

export async function findUserByHandle(db: Db, handle: string): Promise<{ id: number; handle: string } | undefined> {
  return db.selectFrom('users').select(['id', 'handle']).where('handle', '=', handle).executeTakeFirst();
}

/** Users among `handles` who belong to `orgId`, by handle. */
export async function membersByHandle(db: Db, orgId: number, handles: readonly string[]): Promise<Map<string, number>> {
  if (handles.length === 0) return new Map();
  const rows = await db
    .selectFrom('users')
    .innerJoin('memberships', 'memberships.user_id', 'users.id')
    .select(['users.id', 'users.handle'])
    .where('memberships.org_id', '=', orgId)
    .where('users.handle', 'in', handles)
    .execute();
  return new Map(rows.map((r) => [r.handle, r.id]));
}

/** Creates the user and orgs when missing and adds the memberships; idempotent. */
export async function upsertUserWithOrgs(db: Db, handle: string, orgIds: readonly number[], now: string): Promise<number> {
  await db.insertInto('users').values({ handle, created_at: now }).onConflict((oc) => oc.column('handle').doNothing()).execute();
  const user = await findUserByHandle(db, handle);
  if (user === undefined) throw new Error('user vanished after insert');
  for (const orgId of orgIds) {
    await db.insertInto('orgs').values({ id: orgId, created_at: now }).onConflict((oc) => oc.column('id').doNothing()).execute();
    await db
      .insertInto('memberships')
      .values({ user_id: user.id, org_id: orgId })
      .onConflict((oc) => oc.columns(['user_id', 'org_id']).doNothing())
      .execute();
  }
  return user.id;
}

export async function insertToken(
  db: Db,
  values: { userId: number; name: string | null; tokenHash: string; createdAt: string; expiresAt: string | null },
): Promise<number> {
  const row = await db
    .insertInto('tokens')
    .values({
      user_id: values.userId,
      name: values.name,
      token_hash: values.tokenHash,
      created_at: values.createdAt,
      expires_at: values.expiresAt,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Marks the token revoked; returns false when no such token exists. Revoking twice keeps the first time. */
export async function revokeToken(db: Db, tokenId: number, at: string): Promise<boolean> {
  const exists = await db.selectFrom('tokens').select('id').where('id', '=', tokenId).executeTakeFirst();
  if (exists === undefined) return false;
  await db.updateTable('tokens').set({ revoked_at: at }).where('id', '=', tokenId).where('revoked_at', 'is', null).execute();
  return true;
}

export async function countUsers(db: Db): Promise<number> {
  const row = await db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Every user with their org ids, by handle: one statement, one row per membership. */
export async function listUsersWithOrgs(db: Db): Promise<{ handle: string; orgIds: number[] }[]> {
  const rows = await db
    .selectFrom('users')
    .leftJoin('memberships', 'memberships.user_id', 'users.id')
    .select(['users.handle', 'memberships.org_id'])
    .orderBy('users.handle')
    .orderBy('memberships.org_id')
    .execute();
  const users = new Map<string, number[]>();
  for (const row of rows) {
    let orgIds = users.get(row.handle);
    if (orgIds === undefined) users.set(row.handle, (orgIds = []));
    if (row.org_id !== null) orgIds.push(row.org_id);
  }
  return [...users].map(([handle, orgIds]) => ({ handle, orgIds }));
}

/** Tokens (never their hashes), oldest first; only one user's when userId is given. */
export async function listTokenRows(db: Db, userId?: number) {
  let query = db
    .selectFrom('tokens')
    .innerJoin('users', 'users.id', 'tokens.user_id')
    .select(['tokens.id', 'users.handle', 'tokens.name', 'tokens.created_at', 'tokens.expires_at', 'tokens.last_used_at', 'tokens.revoked_at'])
    .orderBy('tokens.id');
  if (userId !== undefined) query = query.where('tokens.user_id', '=', userId);
  return query.execute();
}
