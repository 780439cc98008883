/**
 * The statistics scenarios' user (contract section 11): the "streaker", who completed a daily
 * session every day for ten years and a task a day, in an org of its own (so the listing orgs
 * stay as seeded). `GET /me/stats` reads its streaks over all 3,650 days.
 */
import { sql } from 'kysely';
import { SESSION_DEFAULTS, type Storage, addDays, generateToken, hashToken, sessionColumns } from './service-calls.js';

export const STREAK_DAYS = 3_650;
const ROWS_PER_INSERT = 500;

export interface Streaker {
  id: number;
  handle: string;
  token: string;
  orgId: number;
}

async function nextId(storage: Storage, table: 'users' | 'orgs' | 'sessions' | 'tasks' | 'tokens'): Promise<number> {
  const { rows } = await sql<{ id: number | string | null }>`select max(id) as id from ${sql.table(table)}`.execute(storage.db);
  return Number(rows[0]?.id ?? 0) + 1;
}

async function insertAll(storage: Storage, table: 'session_participants' | 'tasks', rows: readonly Record<string, unknown>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) await storage.db.insertInto(table).values(rows.slice(i, i + ROWS_PER_INSERT) as never).execute();
}

/** Seeds the streaker after everyone else (explicit ids past the others'); returns it with a token. Rows written: the return's `rows`. */
export async function seedStreaker(storage: Storage, now: string): Promise<Streaker & { rows: number }> {
  const [id, orgId, sessionId, firstTask] = [await nextId(storage, 'users'), await nextId(storage, 'orgs'), await nextId(storage, 'sessions'), await nextId(storage, 'tasks')];
  const token = generateToken();
  const today = now.slice(0, 10);
  const first = addDays(today, -STREAK_DAYS);
  await storage.db.insertInto('orgs').values({ id: orgId, created_at: now }).execute();
  await storage.db.insertInto('users').values({ id, handle: 'streaker', created_at: now }).execute();
  await storage.db.insertInto('memberships').values({ user_id: id, org_id: orgId }).execute();
  await storage.db.insertInto('tokens').values({ id: await nextId(storage, 'tokens'), user_id: id, name: 'bench', token_hash: hashToken(token), created_at: now }).execute();
  const model = {
    ...SESSION_DEFAULTS,
    collaborator: [],
    snooze_apps: {},
    recurring_days: [],
    org_id: orgId,
    name: 'every day for ten years',
    type: 'standard' as const,
    schedule: first,
    time: 7 * 60,
    timezone: 'Europe/Berlin',
    duration: 50,
    is_recurring: 1 as const,
    occurrence: 'daily' as const,
    recurring_start: first,
  };
  await storage.db.insertInto('sessions').values({ id: sessionId, ...sessionColumns(model, now), created_by: id, created_at: now }).execute();
  const days = Array.from({ length: STREAK_DAYS }, (_, i) => addDays(first, i));
  const at = (day: string) => `${day}T08:00:00.000Z`;
  await insertAll(storage, 'session_participants', days.map((d) => ({ session_id: sessionId, user_id: id, occurrence_date: d, joined_at: at(d), completed_at: at(d) })));
  await insertAll(
    storage,
    'tasks',
    days.map((d, i) => ({ id: firstTask + i, owner_id: id, context: `done ${d}`, is_completed: 1, source: null, source_id: null, source_id_type: null, session_id: sessionId, created_at: at(d), updated_at: at(d), completed_at: at(d) })),
  );
  return { id, handle: 'streaker', token, orgId, rows: 5 + 2 * STREAK_DAYS };
}
