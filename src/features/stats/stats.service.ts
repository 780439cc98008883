import { FieldErrors } from '../../toolkit/errors.js';
import { addDays, compareDates, daysBetween, fromDayNumber, parseDate, toDayNumber, weekday } from '../recurrence/recurrence.dates.js';
import { zoneOffsetMs } from '../recurrence/recurrence.time.js';
import { DEFAULT_STATS_DAYS, type Group, MAX_STATS_DAYS, type OrgStatsBucket, type StatsBucket, type StatsCounts, type StatsQuery } from './stats.schema.js';

/*
 * Pure functions: rows in, buckets and streaks out. The reads are in stats.reader.ts.
 */

const DAY_MS = 86_400_000;

export interface StatsRange {
  from: string;
  to: string;
  group: Group;
}

/** What one user did, as the reads return it (instants in epoch milliseconds). */
export interface Activity {
  sessions: readonly { userId: number; startsAt: number; duration: number; completed: boolean }[];
  tasks: readonly { userId: number; completedAt: number }[];
}

/** The local day number (days since 1970-01-01) of instant `ms` in `zone`. */
export const localDayNumber = (ms: number, zone: string): number => Math.floor((ms + zoneOffsetMs(zone, ms)) / DAY_MS);

/** The query's range with its defaults (the DEFAULT_STATS_DAYS local days ending `today`, by day); 422 when it is backwards or too long. */
export function resolveRange(query: StatsQuery, today: string): StatsRange {
  const to = query.to ?? today;
  const from = query.from ?? addDays(to, -(DEFAULT_STATS_DAYS - 1));
  const errors = new FieldErrors();
  if (compareDates(to, from) < 0) errors.add('/to', 'must not be before from');
  else if (daysBetween(from, to) + 1 > MAX_STATS_DAYS) errors.add('/to', `the range covers at most ${MAX_STATS_DAYS} days`);
  errors.throwIfAny();
  return { from, to, group: query.group ?? 'day' };
}

/** The first local day of the period holding `day`. */
export function periodStart(day: string, group: Group): string {
  if (group === 'day') return day;
  if (group === 'week') return addDays(day, -((weekday(day) + 6) % 7));
  return `${day.slice(0, 8)}01`;
}

/** The first day of the period after the one starting on `start`. */
function nextPeriod(start: string, group: Group): string {
  if (group === 'day') return addDays(start, 1);
  if (group === 'week') return addDays(start, 7);
  const d = parseDate(start);
  if (d === null) throw new RangeError(`not a date: ${start}`);
  return d.month === 12 ? `${String(d.year + 1).padStart(4, '0')}-01-01` : `${start.slice(0, 5)}${String(d.month + 1).padStart(2, '0')}-01`;
}

/** The starts of every period the range touches, in order. */
export function periodStarts(range: StatsRange): string[] {
  const out: string[] = [];
  for (let start = periodStart(range.from, range.group); compareDates(start, range.to) <= 0; start = nextPeriod(start, range.group)) out.push(start);
  return out;
}

const zero = (): StatsCounts => ({ focused_minutes: 0, sessions_completed: 0, sessions_joined: 0, tasks_completed: 0 });

/** Per period, the counts and who was active; shared by one user's statistics and an org's. */
function tally(range: StatsRange, zone: string, activity: Activity) {
  const starts = periodStarts(range);
  const slot = new Map(starts.map((s, i) => [s, i]));
  const [first, last] = [toDayNumber(range.from), toDayNumber(range.to)];
  const counts = starts.map(zero);
  const active = starts.map(() => new Set<number>());
  const allActive = new Set<number>();
  const place = (ms: number, userId: number): StatsCounts | undefined => {
    const day = localDayNumber(ms, zone);
    if (day < first || day > last) return undefined;
    const i = slot.get(periodStart(fromDayNumber(day), range.group)) as number;
    active[i]?.add(userId);
    allActive.add(userId);
    return counts[i];
  };
  for (const s of activity.sessions) {
    const c = place(s.startsAt, s.userId);
    if (c === undefined) continue;
    c.sessions_joined++;
    if (s.completed) {
      c.sessions_completed++;
      c.focused_minutes += s.duration;
    }
  }
  for (const t of activity.tasks) {
    const c = place(t.completedAt, t.userId);
    if (c !== undefined) c.tasks_completed++;
  }
  return { starts, counts, active, allActive };
}

function sum(counts: readonly StatsCounts[]): StatsCounts {
  const total = zero();
  for (const c of counts) {
    total.focused_minutes += c.focused_minutes;
    total.sessions_completed += c.sessions_completed;
    total.sessions_joined += c.sessions_joined;
    total.tasks_completed += c.tasks_completed;
  }
  return total;
}

/** One user's buckets and totals over the range, in `zone`. */
export function userBuckets(range: StatsRange, zone: string, activity: Activity): { buckets: StatsBucket[]; totals: StatsCounts } {
  const { starts, counts } = tally(range, zone, activity);
  return { buckets: starts.map((start, i) => ({ start, ...(counts[i] as StatsCounts) })), totals: sum(counts) };
}

/** An org's buckets and totals: its members' activity summed, with how many of them were active. */
export function orgBuckets(range: StatsRange, zone: string, activity: Activity): { buckets: OrgStatsBucket[]; totals: StatsCounts & { active_members: number } } {
  const { starts, counts, active, allActive } = tally(range, zone, activity);
  return {
    buckets: starts.map((start, i) => ({ start, ...(counts[i] as StatsCounts), active_members: active[i]?.size ?? 0 })),
    totals: { ...sum(counts), active_members: allActive.size },
  };
}

/**
 * Streaks over the local day numbers with a completed occurrence: the current run counted
 * to `today` (still open: a run that reached yesterday counts) and the longest ever.
 */
export function streaks(days: Iterable<number>, today: number): { current: number; longest: number } {
  const set = new Set(days);
  let current = 0;
  for (let d = set.has(today) ? today : today - 1; set.has(d); d--) current++;
  let longest = 0;
  for (const d of set) {
    if (set.has(d - 1)) continue;
    let run = 1;
    while (set.has(d + run)) run++;
    longest = Math.max(longest, run);
  }
  return { current, longest };
}
