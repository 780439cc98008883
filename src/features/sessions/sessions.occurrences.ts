import type { Phase } from '../../domain/vocabulary.js';
import type { Flag } from '../../storage/columns.js';
import type { OccurrenceRow, SessionRow } from '../../storage/tables.js';
import { notFound } from '../../toolkit/errors.js';
import { addDays, compareDates } from '../recurrence/recurrence.dates.js';
import { type RecurrencePattern, isOccurrence, nextOccurrenceOnOrAfter, occurrencesBetween } from '../recurrence/recurrence.engine.js';
import { type OccurrenceInstants, occurrenceInstants, todayIn } from '../recurrence/recurrence.time.js';
import { type RecurrenceRow, patternOf, recurrenceFromRow } from './sessions.model.js';
import { NO_OVERRIDES, type OverrideFields, type Overrides, dayOf, movedDates } from './sessions.overrides.js';
import { occurrenceKey } from './sessions.participants-repository.js';

/** One dated instance of a session: a series occurrence, or a one-off session's own day. */
export interface OccurrenceView extends OccurrenceInstants {
  date: string;
}

/**
 * Participation rows and exceptions are keyed by occurrence date; a one-off session has
 * a single participation, stored under this key whatever its schedule.
 */
export const ONE_OFF = '';

/**
 * How far ahead of today (or of a series' start, when that is later) the occurrence index
 * holds a series; the indexer extends it as days pass, and a listing further out expands
 * the rest per request. Every index row costs a write in several b-trees, so the horizon
 * covers the calendar views people use (the next three months), not the longest range a
 * listing may ask for (docs/performance.md measures both sides).
 */
export const INDEX_HORIZON_DAYS = 92;

/**
 * How far before today the occurrence index holds a series that began earlier: a series
 * saved with a start in year 1 would otherwise write a row for every day since, inside the
 * request. A dated listing older than this expands those series per request (a few: it
 * needs a series that began more than this long before it was last written).
 */
export const INDEX_PAST_DAYS = 366;

/** The recurrence pattern of a stored series (with its deleted occurrences), or null for a one-off session. */
export function seriesPattern(row: RecurrenceRow, exceptions?: ReadonlySet<string>): RecurrencePattern | null {
  return patternOf(recurrenceFromRow(row), exceptions);
}

/** An occurrence's instants: on its day at the series' time, or where and when its override (`fields`) moved it. */
export function occurrenceView(row: Pick<SessionRow, 'time_minutes' | 'duration' | 'timezone'>, date: string, fields?: OverrideFields): OccurrenceView {
  if (fields === undefined) return { date, ...occurrenceInstants(date, row.time_minutes, row.duration, row.timezone) };
  return { date, ...occurrenceInstants(dayOf(date, fields), fields.time_minutes ?? row.time_minutes, fields.duration ?? row.duration, row.timezone) };
}

/** Where an occurrence (or a one-off session) is in time at `now`. */
export function phaseAt(o: { starts_at: string; ends_at: string }, now: Date): Phase {
  const at = now.toISOString();
  return at < o.starts_at ? 'upcoming' : at < o.ends_at ? 'running' : 'ended';
}

/**
 * A series shown as a whole: the phase of `next` (at its override's instants, `fields`), its first occurrence on or after its
 * today (null: none is left). When that one is already over today, a later one follows
 * unless it was the last day of the series.
 */
export function seriesPhase(row: Pick<SessionRow, 'time_minutes' | 'duration' | 'timezone' | 'recurring_ends'>, next: string | null, now: Date, fields?: OverrideFields): Phase {
  if (next === null) return 'ended';
  const phase = phaseAt(occurrenceView(row, next, fields), now);
  return phase !== 'ended' || (row.recurring_ends !== null && compareDates(next, row.recurring_ends) >= 0) ? phase : 'upcoming';
}

/** The next occurrence on or after today in the session's time zone, or null once the series has ended. */
export function nextOccurrence(row: Pick<SessionRow, 'timezone'>, pattern: RecurrencePattern, now?: Date): string | null {
  return nextOccurrenceOnOrAfter(pattern, todayIn(row.timezone, now));
}

/**
 * The participation key a request about `date` refers to: ONE_OFF for a one-off
 * session (whose only valid date is its schedule), else that occurrence, by default the
 * next one; undefined when there is no such occurrence.
 */
export function occurrenceOf(row: RecurrenceRow, exceptions: ReadonlySet<string> | undefined, date: string | undefined): string | undefined {
  const pattern = seriesPattern(row, exceptions);
  if (pattern === null) return date !== undefined && date !== row.schedule ? undefined : ONE_OFF;
  const resolved = date ?? nextOccurrence(row, pattern);
  return resolved === null || !isOccurrence(pattern, resolved) ? undefined : resolved;
}

/** occurrenceOf, or 404 when there is no such occurrence. */
export function resolveOccurrence(row: RecurrenceRow, exceptions: ReadonlySet<string> | undefined, date: string | undefined): string {
  const resolved = occurrenceOf(row, exceptions, date);
  if (resolved === undefined) throw notFound('occurrence');
  return resolved;
}

/** The last local date the occurrence index holds for this session when it is `today` (UTC). */
export function indexHorizon(row: RecurrenceRow, today: string): string {
  const pattern = seriesPattern(row);
  if (pattern === null) return row.schedule;
  const target = addDays(compareDates(pattern.start, today) > 0 ? pattern.start : today, INDEX_HORIZON_DAYS);
  return pattern.ends !== null && compareDates(pattern.ends, target) < 0 ? pattern.ends : target;
}

/**
 * The first local date the occurrence index holds for this session when it is `today`
 * (UTC), or null when that is its first occurrence: INDEX_PAST_DAYS before today for a
 * series that began earlier.
 */
export function indexFloor(row: RecurrenceRow, today: string): string | null {
  const pattern = seriesPattern(row);
  if (pattern === null) return null;
  const floor = floorOn(today);
  return compareDates(pattern.start, floor) < 0 ? floor : null;
}

/** The floor of a series the index is written for on `today` (UTC): INDEX_PAST_DAYS before it. */
export const floorOn = (today: string) => addDays(today, -INDEX_PAST_DAYS);

/** Today's date in UTC: the day the index is written for. */
export const utcToday = (now: Date = new Date()) => now.toISOString().slice(0, 10);

/** The session's days in [from, to], removed occurrences left out; a one-off session's is its schedule. */
export function daysIn(row: RecurrenceRow, exceptions: ReadonlySet<string> | undefined, from: string, to: string): string[] {
  const pattern = seriesPattern(row, exceptions);
  if (pattern === null) return compareDates(from, row.schedule) <= 0 && compareDates(row.schedule, to) <= 0 ? [row.schedule] : [];
  return compareDates(from, to) > 0 ? [] : occurrencesBetween(pattern, from, to);
}

/** What an occurrence row copies from its session (so listings filter without reading sessions). */
export type IndexedSession = RecurrenceRow & Pick<SessionRow, 'org_id' | 'created_by' | 'is_public' | 'type'>;

/**
 * The index rows of a session's occurrences in [from, through]: a day is completed when
 * the session is, or when its host completed that occurrence (`hostCompleted`, by date);
 * an overridden one at its override's instants and day. Every occurrence an override moved
 * to another day is among them, wherever its date lies.
 */
export function occurrenceRows(
  session: IndexedSession,
  exceptions: ReadonlySet<string> | undefined,
  hostCompleted: ReadonlySet<string>,
  from: string,
  through: string,
  overrides: Overrides = NO_OVERRIDES,
): OccurrenceRow[] {
  const allCompleted = session.status === 'completed';
  const days = daysIn(session, exceptions, from, through);
  // Every moved occurrence is indexed, whatever the span: reads by day find it where it takes place.
  const inSpan = new Set(days);
  const pattern = seriesPattern(session, exceptions);
  const moved = pattern === null ? [] : movedDates(overrides, session.id).filter((d) => !inSpan.has(d) && isOccurrence(pattern, d));
  return [...days, ...moved].map((date) => {
    const fields = overrides.get(occurrenceKey(session.id, date));
    const { starts_at, ends_at } = occurrenceView(session, date, fields);
    const completed: Flag = allCompleted || hostCompleted.has(date) ? 1 : 0;
    return {
      session_id: session.id,
      occurrence_date: date,
      org_id: session.org_id,
      created_by: session.created_by,
      is_public: session.is_public,
      type: session.type,
      completed,
      starts_at,
      ends_at,
      day: dayOf(date, fields),
    };
  });
}
