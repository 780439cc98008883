import type { Db } from '../../storage/database.js';
import type { SessionRow } from '../../storage/tables.js';
import type { RecurrencePattern } from '../recurrence/recurrence.engine.js';
import { toRRule } from '../recurrence/recurrence.rrule.js';
import type { RecurrenceRow } from './sessions.model.js';
import { seriesPattern } from './sessions.occurrences.js';
import type { SessionsRepository } from './sessions.repository.js';

/** What a row's rrule is derived from when it was stored before rrule was kept. */
type RuleRow = RecurrenceRow & Pick<SessionRow, 'rrule'>;

/**
 * A session as the occurrence rules see it: its row (never mutated), its removed
 * occurrences, its pattern (null: a one-off session) and its rrule.
 */
export interface Series<R extends RecurrenceRow = RecurrenceRow> {
  row: R;
  exceptions: ReadonlySet<string> | undefined;
  pattern: RecurrencePattern | null;
}

/**
 * The rrule a record shows: the stored one, or for a series stored before rrule was kept,
 * the one derived from its pattern (until the indexer stores it). Pure: the row is left as read.
 */
export function rruleOf(row: RuleRow, exceptions: ReadonlySet<string> | undefined): string | null {
  if (row.rrule !== null || row.is_recurring !== 1) return row.rrule;
  const pattern = seriesPattern(row, exceptions);
  return pattern === null ? null : toRRule(pattern, { date: pattern.start, minutes: row.time_minutes, timezone: row.timezone });
}

/** The series loader: removed occurrences and pattern of many rows at once, in one statement (none for one-off rows). */
export async function loadSeries<R extends RecurrenceRow>(sessions: SessionsRepository, db: Db, rows: readonly R[]): Promise<Map<number, Series<R>>> {
  const recurring = rows.filter((r) => r.is_recurring === 1).map((r) => r.id);
  const exceptions = recurring.length === 0 ? new Map<number, Set<string>>() : await sessions.exceptionsOf(db, recurring);
  return new Map(rows.map((row) => [row.id, seriesOf(row, exceptions.get(row.id))]));
}

export const seriesOf = <R extends RecurrenceRow>(row: R, exceptions: ReadonlySet<string> | undefined): Series<R> => ({
  row,
  exceptions,
  pattern: seriesPattern(row, exceptions),
});

/** loadSeries of one row. */
export async function loadOne<R extends RecurrenceRow>(sessions: SessionsRepository, db: Db, row: R): Promise<Series<R>> {
  return (await loadSeries(sessions, db, [row])).get(row.id) as Series<R>;
}

/** Rows with the rrule each shows (rruleOf): new objects where it was derived, the rows as read elsewhere. */
export async function withRRules<R extends RuleRow>(sessions: SessionsRepository, db: Db, rows: readonly R[]): Promise<R[]> {
  const stale = rows.filter((r) => r.is_recurring === 1 && r.rrule === null);
  if (stale.length === 0) return [...rows];
  const series = await loadSeries(sessions, db, stale);
  return rows.map((r) => (series.has(r.id) ? { ...r, rrule: rruleOf(r, series.get(r.id)?.exceptions) } : r));
}
