import { parseJson, toJson } from '../../storage/columns.js';
import type { Db } from '../../storage/database.js';
import type { AuthenticatedUser } from './auth.caller.js';

/**
 * Principals (user and memberships, as the API sees a caller) of many users at once, by
 * id: two statements whatever the number. A user without a row is missing from the
 * answer; a disabled one is there (callers that refuse them check that themselves).
 */
export async function principalsOf(db: Db, userIds: readonly number[]): Promise<Map<number, AuthenticatedUser>> {
  const out = new Map<number, AuthenticatedUser>();
  const ids = [...new Set(userIds)];
  if (ids.length === 0) return out;
  const [people, memberships] = await Promise.all([
    db.selectFrom('users').select(['id', 'handle', 'timezone']).where('id', 'in', ids).execute(),
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
