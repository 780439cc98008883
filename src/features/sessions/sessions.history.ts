import type { Db } from '../../storage/database.js';
import { addDays } from '../recurrence/recurrence.dates.js';
import { ONE_OFF, occurrenceView } from './sessions.occurrences.js';
import { type Overrides, overrideRows } from './sessions.overrides.js';
import { occurrenceKey } from './sessions.participants-repository.js';

/** Users per statement: a large org stays within a statement's parameters. */
const USERS_PER_READ = 500;
/** Moved occurrences per read of their participation: with USERS_PER_READ users, within both databases' parameter limits. */
const MOVED_PER_READ = 10_000;
/** Sessions per statement: under both databases' parameter limits (SQLite 32,766; PostgreSQL 65,535). */
const SESSIONS_PER_READ = 30_000;

/** One occurrence a user joined (every participation row is a join; the host's complete writes one too). */
export interface ParticipationRecord {
  userId: number;
  /** The occurrence's start, epoch milliseconds. */
  startsAt: number;
  /** Minutes. */
  duration: number;
  completed: boolean;
}

type SessionTimes = Map<number, { time_minutes: number; duration: number; timezone: string; starts_at: string }>;

/**
 * The times of the given sessions, by id: read apart from the participation rows, so that both
 * reads stay on an index whatever the planner guesses (a join let PostgreSQL hash-join a
 * sequential scan of sessions for a user with thousands of rows).
 */
async function sessionTimes(db: Db, ids: Iterable<number>): Promise<SessionTimes> {
  const all = [...new Set(ids)];
  const out: SessionTimes = new Map();
  for (let i = 0; i < all.length; i += SESSIONS_PER_READ) {
    const rows = await db.selectFrom('sessions').select(['id', 'time_minutes', 'duration', 'timezone', 'starts_at']).where('id', 'in', all.slice(i, i + SESSIONS_PER_READ)).execute();
    for (const r of rows) out.set(r.id, r);
  }
  return out;
}

/**
 * The start and length of an occurrence: a one-off session's own, else its series' on `date`
 * or where and when its override moved it; undefined when the session is gone meanwhile.
 */
function startOf(times: SessionTimes, overrides: Overrides, sessionId: number, date: string) {
  const s = times.get(sessionId);
  if (s === undefined) return undefined;
  if (date === ONE_OFF) return { startsAt: Date.parse(s.starts_at), duration: s.duration };
  const fields = overrides.get(occurrenceKey(sessionId, date));
  return { startsAt: Date.parse(occurrenceView(s, date, fields).starts_at), duration: fields?.duration ?? s.duration };
}

/** The sessions' times and the overrides of the rows' occurrences: what startOf needs. */
async function timesOf(db: Db, rows: readonly { session_id: number; occurrence_date: string }[]) {
  const dated = rows.filter((r) => r.occurrence_date !== ONE_OFF).map((r) => ({ sessionId: r.session_id, date: r.occurrence_date }));
  const [times, overrides] = await Promise.all([sessionTimes(db, rows.map((r) => r.session_id)), overrideRows.at(db, dated)]);
  return (sessionId: number, date: string) => startOf(times, overrides, sessionId, date);
}

/**
 * Participation of `userIds` in series on the local dates [firstDay, lastDay] and in every
 * one-off session, from the (user_id, occurrence_date, session_id, completed_at) index alone;
 * a one-off session's start is read by id with the series' times.
 */
function participationRows(db: Db, userIds: readonly number[], firstDay: string, lastDay: string) {
  return db
    .selectFrom('session_participants')
    .select(['user_id', 'session_id', 'occurrence_date', 'completed_at'])
    .where('user_id', 'in', userIds)
    .where((eb) => eb.or([eb('occurrence_date', '=', ONE_OFF), eb.and([eb('occurrence_date', '>=', firstDay), eb('occurrence_date', '<=', lastDay)])]))
    .execute();
}

/**
 * Participation in occurrences an override moved onto the dates [firstDay, lastDay] from a
 * day outside them: the moved ones from the partial index of moved occurrences (the index
 * holds every one), then the users' rows of those occurrences by primary key.
 */
async function movedInRows(db: Db, userIds: readonly number[], firstDay: string, lastDay: string) {
  const moved = await db
    .selectFrom('session_occurrences')
    .select(['session_id', 'occurrence_date'])
    .whereRef('day', '<>', 'occurrence_date')
    .where('day', '>=', firstDay)
    .where('day', '<=', lastDay)
    .where((eb) => eb.or([eb('occurrence_date', '<', firstDay), eb('occurrence_date', '>', lastDay)]))
    .execute();
  const wanted = new Set(moved.map((m) => occurrenceKey(m.session_id, m.occurrence_date)));
  const out = [];
  for (let i = 0; i < moved.length; i += MOVED_PER_READ) {
    const part = moved.slice(i, i + MOVED_PER_READ);
    const rows = await db
      .selectFrom('session_participants')
      .select(['user_id', 'session_id', 'occurrence_date', 'completed_at'])
      .where('session_id', 'in', [...new Set(part.map((m) => m.session_id))])
      .where('occurrence_date', 'in', [...new Set(part.map((m) => m.occurrence_date))])
      .where('user_id', 'in', userIds)
      .execute();
    out.push(...rows.filter((r) => wanted.has(occurrenceKey(r.session_id, r.occurrence_date))));
  }
  return out;
}

/**
 * The occurrences the given users joined or completed that start in [from, to) (ISO
 * instants): four statements per USERS_PER_READ users (five when an occurrence was moved into the range). A series' occurrence is found by its
 * local date, which lies within a day or two of its start in any zone (offsets are −12 to
 * +14 hours), so the dates read are widened by that and the start is then checked exactly;
 * one an override moved is counted where and when it took place.
 */
export async function participationHistory(db: Db, q: { userIds: readonly number[]; from: string; to: string }): Promise<ParticipationRecord[]> {
  const userIds = [...new Set(q.userIds)];
  const [fromMs, toMs] = [Date.parse(q.from), Date.parse(q.to)];
  const [firstDay, lastDay] = [addDays(q.from.slice(0, 10), -2), addDays(q.to.slice(0, 10), 1)];
  const out: ParticipationRecord[] = [];
  for (let i = 0; i < userIds.length; i += USERS_PER_READ) {
    const chunk = userIds.slice(i, i + USERS_PER_READ);
    const [inRange, movedIn] = await Promise.all([participationRows(db, chunk, firstDay, lastDay), movedInRows(db, chunk, firstDay, lastDay)]);
    const rows = [...inRange, ...movedIn];
    const startOf = await timesOf(db, rows);
    for (const r of rows) {
      const at = startOf(r.session_id, r.occurrence_date);
      if (at !== undefined && at.startsAt >= fromMs && at.startsAt < toMs) out.push({ userId: r.user_id, ...at, completed: r.completed_at !== null });
    }
  }
  return out;
}

/**
 * The start of every occurrence the user ever completed (epoch milliseconds, in no order;
 * a moved one where it took place): what streaks are made of. Three statements: the completed rows from the covering
 * (user_id, occurrence_date, session_id, completed_at) index, then their sessions and overrides;
 * ten years of daily sessions are 3,650 index entries.
 */
export async function completedStarts(db: Db, userId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('session_participants')
    .select(['session_id', 'occurrence_date'])
    .where('user_id', '=', userId)
    .where('completed_at', 'is not', null)
    .execute();
  const startOf = await timesOf(db, rows);
  const out: number[] = [];
  for (const r of rows) {
    const at = startOf(r.session_id, r.occurrence_date);
    if (at !== undefined) out.push(at.startsAt);
  }
  return out;
}
