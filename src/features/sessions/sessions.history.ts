import type { Db } from '../../storage/database.js';
import { addDays } from '../recurrence/recurrence.dates.js';
import { localToEpochMillis } from '../recurrence/recurrence.time.js';
import { ONE_OFF } from './sessions.occurrences.js';

/** Users per statement: a large org stays within a statement's parameters. */
const USERS_PER_READ = 500;

/** One occurrence a user joined (every participation row is a join; the host's complete writes one too). */
export interface ParticipationRecord {
  userId: number;
  /** The occurrence's start, epoch milliseconds. */
  startsAt: number;
  /** Minutes. */
  duration: number;
  completed: boolean;
}

interface HistoryRow {
  occurrence_date: string;
  time_minutes: number;
  timezone: string;
  starts_at: string;
}

/** A participation row's occurrence start: a one-off session's own, else the series' local time on that day. */
const startOf = (r: HistoryRow): number =>
  r.occurrence_date === ONE_OFF ? Date.parse(r.starts_at) : localToEpochMillis(r.occurrence_date, r.time_minutes, r.timezone);

/**
 * The occurrences the given users joined or completed that start in [from, to) (ISO
 * instants): one statement per USERS_PER_READ users. A series' occurrence is found by its
 * local date, which lies within a day or two of its start in any zone (offsets are −12 to
 * +14 hours), so the dates read are widened by that and the start is then checked exactly.
 */
export async function participationHistory(db: Db, q: { userIds: readonly number[]; from: string; to: string }): Promise<ParticipationRecord[]> {
  const userIds = [...new Set(q.userIds)];
  const [fromMs, toMs] = [Date.parse(q.from), Date.parse(q.to)];
  const firstDay = addDays(q.from.slice(0, 10), -2);
  const lastDay = addDays(q.to.slice(0, 10), 1);
  const reads = [];
  for (let i = 0; i < userIds.length; i += USERS_PER_READ) {
    reads.push(
      db
        .selectFrom('session_participants as sp')
        .innerJoin('sessions as s', 's.id', 'sp.session_id')
        .select(['sp.user_id', 'sp.occurrence_date', 'sp.completed_at', 's.time_minutes', 's.duration', 's.timezone', 's.starts_at'])
        .where('sp.user_id', 'in', userIds.slice(i, i + USERS_PER_READ))
        .where((eb) =>
          eb.or([
            eb.and([eb('sp.occurrence_date', '=', ONE_OFF), eb('s.starts_at', '>=', q.from), eb('s.starts_at', '<', q.to)]),
            eb.and([eb('sp.occurrence_date', '>=', firstDay), eb('sp.occurrence_date', '<=', lastDay)]),
          ]),
        )
        .execute(),
    );
  }
  const out: ParticipationRecord[] = [];
  for (const r of (await Promise.all(reads)).flat()) {
    const startsAt = startOf(r);
    if (startsAt >= fromMs && startsAt < toMs) out.push({ userId: r.user_id, startsAt, duration: r.duration, completed: r.completed_at !== null });
  }
  return out;
}

/**
 * The start of every occurrence the user ever completed (epoch milliseconds, in no order):
 * what streaks are made of. One statement through the (user_id, occurrence_date) index;
 * ten years of daily sessions are 3,650 rows.
 */
export async function completedStarts(db: Db, userId: number): Promise<number[]> {
  const rows = await db
    .selectFrom('session_participants as sp')
    .innerJoin('sessions as s', 's.id', 'sp.session_id')
    .select(['sp.occurrence_date', 's.time_minutes', 's.timezone', 's.starts_at'])
    .where('sp.user_id', '=', userId)
    .where('sp.completed_at', 'is not', null)
    .execute();
  return rows.map(startOf);
}
