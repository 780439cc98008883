import type { Db } from '../../storage/database.js';
import { addDays } from '../recurrence/recurrence.dates.js';
import { localToEpochMillis } from '../recurrence/recurrence.time.js';
import { ONE_OFF } from './sessions.occurrences.js';

/** Users per statement: a large org stays within a statement's parameters. */
const USERS_PER_READ = 500;
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

/** The start of a series' occurrence on its local `date`; undefined when the session is gone meanwhile. */
function seriesStart(times: SessionTimes, sessionId: number, date: string) {
  const s = times.get(sessionId);
  return s === undefined ? undefined : { startsAt: localToEpochMillis(date, s.time_minutes, s.timezone), duration: s.duration };
}

/** Series participation of `userIds` on the local dates [firstDay, lastDay], from the (user_id, occurrence_date, …) index alone. */
function seriesRows(db: Db, userIds: readonly number[], firstDay: string, lastDay: string) {
  return db
    .selectFrom('session_participants')
    .select(['user_id', 'session_id', 'occurrence_date', 'completed_at'])
    .where('user_id', 'in', userIds)
    .where('occurrence_date', '>=', firstDay)
    .where('occurrence_date', '<=', lastDay)
    .execute();
}

/** One-off sessions' participation of `userIds` starting in [from, to). */
function oneOffRows(db: Db, userIds: readonly number[], from: string, to: string) {
  return db
    .selectFrom('session_participants as sp')
    .innerJoin('sessions as s', 's.id', 'sp.session_id')
    .select(['sp.user_id', 'sp.completed_at', 's.starts_at', 's.duration'])
    .where('sp.user_id', 'in', userIds)
    .where('sp.occurrence_date', '=', ONE_OFF)
    .where('s.starts_at', '>=', from)
    .where('s.starts_at', '<', to)
    .execute();
}

/**
 * The occurrences the given users joined or completed that start in [from, to) (ISO
 * instants): three statements per USERS_PER_READ users. A series' occurrence is found by its
 * local date, which lies within a day or two of its start in any zone (offsets are −12 to
 * +14 hours), so the dates read are widened by that and the start is then checked exactly.
 */
export async function participationHistory(db: Db, q: { userIds: readonly number[]; from: string; to: string }): Promise<ParticipationRecord[]> {
  const userIds = [...new Set(q.userIds)];
  const [fromMs, toMs] = [Date.parse(q.from), Date.parse(q.to)];
  const [firstDay, lastDay] = [addDays(q.from.slice(0, 10), -2), addDays(q.to.slice(0, 10), 1)];
  const out: ParticipationRecord[] = [];
  for (let i = 0; i < userIds.length; i += USERS_PER_READ) {
    const chunk = userIds.slice(i, i + USERS_PER_READ);
    const [series, oneOff] = await Promise.all([seriesRows(db, chunk, firstDay, lastDay), oneOffRows(db, chunk, q.from, q.to)]);
    const times = await sessionTimes(db, series.map((r) => r.session_id));
    for (const r of series) {
      const at = seriesStart(times, r.session_id, r.occurrence_date);
      if (at !== undefined && at.startsAt >= fromMs && at.startsAt < toMs) out.push({ userId: r.user_id, ...at, completed: r.completed_at !== null });
    }
    for (const r of oneOff) out.push({ userId: r.user_id, startsAt: Date.parse(r.starts_at), duration: r.duration, completed: r.completed_at !== null });
  }
  return out;
}

/**
 * The start of every occurrence the user ever completed (epoch milliseconds, in no order):
 * what streaks are made of. Two statements: the completed rows from the covering
 * (user_id, occurrence_date, session_id, completed_at) index, then their sessions by id;
 * ten years of daily sessions are 3,650 index entries.
 */
export async function completedStarts(db: Db, userId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('session_participants')
    .select(['session_id', 'occurrence_date'])
    .where('user_id', '=', userId)
    .where('completed_at', 'is not', null)
    .execute();
  const sessions = await sessionTimes(db, rows.map((r) => r.session_id));
  const out: number[] = [];
  for (const r of rows) {
    const s = sessions.get(r.session_id);
    if (s !== undefined) out.push(r.occurrence_date === ONE_OFF ? Date.parse(s.starts_at) : localToEpochMillis(r.occurrence_date, s.time_minutes, s.timezone));
  }
  return out;
}
