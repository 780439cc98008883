import { notFound } from '../../toolkit/errors.js';
import { type RecurrencePattern, isOccurrence, nextOccurrenceOnOrAfter } from '../recurrence/recurrence.engine.js';
import { type OccurrenceInstants, occurrenceInstants, todayIn } from '../recurrence/recurrence.time.js';
import type { SessionRow } from '../../storage/tables.js';
import { type RecurrenceRow, patternOf, recurrenceFromRow } from './sessions.model.js';

/** One dated instance of a session: a series occurrence, or a one-off session's own day. */
export interface OccurrenceView extends OccurrenceInstants {
  date: string;
}

/**
 * Participation rows and exceptions are keyed by occurrence date; a one-off session has
 * a single participation, stored under this key whatever its schedule.
 */
export const ONE_OFF = '';

/** The recurrence pattern of a stored series (with its deleted occurrences), or null for a one-off session. */
export function seriesPattern(row: RecurrenceRow, exceptions?: ReadonlySet<string>): RecurrencePattern | null {
  return patternOf(recurrenceFromRow(row), exceptions);
}

export function occurrenceView(row: Pick<SessionRow, 'time_minutes' | 'duration' | 'timezone'>, date: string): OccurrenceView {
  return { date, ...occurrenceInstants(date, row.time_minutes, row.duration, row.timezone) };
}

/** The next occurrence on or after today in the session's time zone, or null once the series has ended. */
export function nextOccurrence(row: Pick<SessionRow, 'timezone'>, pattern: RecurrencePattern): string | null {
  return nextOccurrenceOnOrAfter(pattern, todayIn(row.timezone));
}

/**
 * The participation key a request about `date` refers to: ONE_OFF for a one-off
 * session (whose only valid date is its schedule), else that occurrence, by default the
 * next one. 404 when there is no such occurrence.
 */
export function resolveOccurrence(row: RecurrenceRow, exceptions: ReadonlySet<string> | undefined, date: string | undefined): string {
  const pattern = seriesPattern(row, exceptions);
  if (pattern === null) {
    if (date !== undefined && date !== row.schedule) throw notFound('occurrence');
    return ONE_OFF;
  }
  const resolved = date ?? nextOccurrence(row, pattern);
  if (resolved === null || !isOccurrence(pattern, resolved)) throw notFound('occurrence');
  return resolved;
}
