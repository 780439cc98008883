import { parseJson, toJson } from '../../storage/columns.js';
import type { Db, Storage } from '../../storage/database.js';
import type { AuthenticatedUser } from './auth.caller.js';

/**
 * Principals (user and memberships, as the API sees a caller) of many users at once, by
 * id: two statements whatever the number. A user without a row is missing from the
 * answer; a disabled one is there, unless `enabledOnly` (contract section 13: a disabled
 * user is sent and shown nothing).
 */
export async function principalsOf(db: Db, userIds: readonly number[], opts: { enabledOnly?: boolean } = {}): Promise<Map<number, AuthenticatedUser>> {
  const out = new Map<number, AuthenticatedUser>();
  const ids = [...new Set(userIds)];
  if (ids.length === 0) return out;
  const users = db.selectFrom('users').select(['id', 'handle', 'timezone']).where('id', 'in', ids);
  const [people, memberships] = await Promise.all([
    (opts.enabledOnly === true ? users.where('disabled_at', 'is', null) : users).execute(),
    db.selectFrom('memberships').select(['user_id', 'org_id']).where('user_id', 'in', ids).orderBy('org_id').execute(),
  ]);
  for (const p of people) out.set(p.id, { id: p.id, handle: p.handle, timezone: p.timezone, orgIds: [] });
  for (const m of memberships) out.get(m.user_id)?.orgIds.push(m.org_id);
  return out;
}

/** Home reminders (minutes before a session starts) of many users at once, by id: one statement. */
export async function homeRemindersOf(db: Db, userIds: readonly number[]): Promise<Map<number, number[]>> {
  const ids = [...new Set(userIds)];
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('users').select(['id', 'reminders']).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, parseJson(r.reminders)]));
}

/** Every offset some user's home reminders hold: the distinct lists, read from their index. */
export async function homeOffsetsInUse(db: Db): Promise<number[]> {
  const rows = await db.selectFrom('users').select('reminders').distinct().execute();
  return [...new Set(rows.flatMap((r) => parseJson(r.reminders)))];
}

/** The user's home reminders (`GET /me`). */
export async function readHomeReminders(db: Db, userId: number): Promise<number[]> {
  return (await homeRemindersOf(db, [userId])).get(userId) ?? [];
}

/** Sets the user's home reminders (`PUT /me`). */
export async function writeHomeReminders(db: Db, userId: number, reminders: readonly number[]): Promise<void> {
  await db.updateTable('users').set({ reminders: toJson([...reminders]) }).where('id', '=', userId).execute();
}

/** Of these users, those with a row and not disabled: one statement. */
export async function enabledAmong(db: Db, userIds: readonly number[]): Promise<Set<number>> {
  const ids = [...new Set(userIds)];
  if (ids.length === 0) return new Set();
  return new Set((await db.selectFrom('users').select('id').where('id', 'in', ids).where('disabled_at', 'is', null).execute()).map((u) => u.id));
}

/** Users per statement of handlesOf: any number of them stays within a statement's parameters. */
const HANDLES_PER_READ = 500;

/** Handles by id, of any number of users (operators' listings). */
export async function handlesOf(db: Db, userIds: readonly number[]): Promise<Map<number, string>> {
  const ids = [...new Set(userIds)];
  const out = new Map<number, string>();
  for (let i = 0; i < ids.length; i += HANDLES_PER_READ) {
    for (const u of await db.selectFrom('users').select(['id', 'handle']).where('id', 'in', ids.slice(i, i + HANDLES_PER_READ)).execute()) out.set(u.id, u.handle);
  }
  return out;
}

/**
 * Locks the user's row until the transaction ends (PostgreSQL; SQLite's write transactions
 * take turns): what another feature counts per user under it (a cap) holds under a race.
 */
export async function lockUser(storage: Storage, trx: Db, userId: number): Promise<void> {
  await storage.forUpdate(trx.selectFrom('users').select('id').where('id', '=', userId)).execute();
}

/** Users among `handles` who belong to `orgId`: their ids by handle (a session's collaborators). */
export async function membersByHandle(db: Db, q: { orgId: number; handles: readonly string[] }): Promise<Map<string, number>> {
  if (q.handles.length === 0) return new Map();
  const rows = await db
    .selectFrom('users')
    .innerJoin('memberships', 'memberships.user_id', 'users.id')
    .select(['users.id', 'users.handle'])
    .where('memberships.org_id', '=', q.orgId)
    .where('users.handle', 'in', q.handles)
    .execute();
  return new Map(rows.map((r) => [r.handle, r.id]));
}
