import { FieldErrors } from '../../http/errors.js';
import { decodeCursor, encodeCursor } from '../../http/paging.js';
import type { Storage } from '../../storage/database.js';
import type { AuthenticatedUser } from '../auth/auth.service.js';
import { addDays, compareDates, daysBetween } from '../recurrence/recurrence.dates.js';
import { ruleDatesFrom } from '../recurrence/recurrence.engine.js';
import { occurrenceView, seriesPattern } from './sessions.occurrences.js';
import { takeMerged } from './sessions.merge.js';
import { type Item, effectiveStatus, render } from './sessions.records.js';
import * as repo from './sessions.repository.js';
import { LAST_SESSION_DATE, type ListSessionsQuery, type Session } from './sessions.schema.js';

export const MAX_RANGE_DAYS = 366;
const DEFAULT_LIMIT = 100;

/** Adds an error unless from ≤ to and the inclusive range covers at most MAX_RANGE_DAYS days. */
function rangeErrors(from: string, to: string, path: string, errors: FieldErrors): void {
  if (compareDates(to, from) < 0) errors.add(path, 'must not be before the start of the range');
  else if (daysBetween(from, to) + 1 > MAX_RANGE_DAYS) errors.add(path, `the range covers at most ${MAX_RANGE_DAYS} days`);
}

/** 422 unless from ≤ to and the inclusive range covers at most MAX_RANGE_DAYS days. */
export function checkRange(from: string, to: string, path: string): void {
  const errors = new FieldErrors();
  rangeErrors(from, to, path, errors);
  errors.throwIfAny();
}

const minDate = (a: string, b: string) => (compareDates(a, b) <= 0 ? a : b);

/** The local-day range a listing asks for (undefined: no date filter); its problems go to `errors`. */
function rangeOf(query: ListSessionsQuery, errors: FieldErrors): { from: string; to: string } | undefined {
  if (query.date !== undefined && (query.day_start !== undefined || query.day_ends !== undefined)) {
    errors.add('/date', 'use either date or day_start/day_ends, not both');
  }
  if (query.day_ends !== undefined && query.day_start === undefined) errors.add('/day_start', 'is required with day_ends');
  if (query.date !== undefined) return { from: query.date, to: query.date };
  if (query.day_start === undefined) return undefined;
  const to = query.day_ends ?? minDate(addDays(query.day_start, MAX_RANGE_DAYS - 1), LAST_SESSION_DATE);
  rangeErrors(query.day_start, to, '/day_ends', errors);
  return { from: query.day_start, to };
}

type SortKey = { startsAt: string; id: number };
const sortKey = (i: Item): SortKey => ({ startsAt: i.occurrence?.starts_at ?? i.row.starts_at, id: i.row.id });
/** Instants are ISO strings of one fixed format, so they order as text. */
const before = (a: SortKey, b: SortKey) => a.startsAt < b.startsAt || (a.startsAt === b.startsAt && a.id < b.id);
const byKey = (a: Item, b: Item) => (before(sortKey(a), sortKey(b)) ? -1 : before(sortKey(b), sortKey(a)) ? 1 : 0);

const DAY_MS = 86_400_000;

/**
 * A local day from which on a series' occurrences may start after the instant `startsAt`:
 * local time is within a day of UTC, so two days before its UTC date is safely early.
 */
function firstDayAfter(startsAt: string, from: string): string {
  const ms = Date.parse(startsAt);
  if (Number.isNaN(ms)) return from;
  const day = new Date(ms - 2 * DAY_MS).toISOString().slice(0, 10);
  return /^\d{4}-\d{2}-\d{2}$/.test(day) && day > from ? day : from;
}

/**
 * Series that may occur in the range, expanded lazily into one item per occurrence after
 * the cursor and merged in listing order: only the first `take` items of the merge are
 * ever computed. `completed` is decided per occurrence (its host may have completed just
 * that one), so it is applied here rather than in SQL.
 */
async function seriesItems(
  storage: Storage,
  user: AuthenticatedUser,
  filters: repo.SessionFilters,
  range: { from: string; to: string },
  after: SortKey | undefined,
  take: number,
): Promise<{ items: Item[]; exceptions: Map<number, Set<string>> }> {
  // A completed series has only completed occurrences, so "not completed" can still be filtered in SQL.
  const sqlFilters = filters.completed === 1 ? { ...filters, completed: undefined } : filters;
  const series = await repo.listSeriesOverlapping(storage.db, storage.dialect, user, sqlFilters, range.from, range.to);
  const ids = series.map((s) => s.id);
  const [exceptions, hostCompleted] = await Promise.all([
    repo.exceptionsOf(storage.db, ids),
    repo.hostCompletions(storage.db, ids, range.from, range.to),
  ]);
  const start = after === undefined ? range.from : firstDayAfter(after.startsAt, range.from);

  // Within one series, date order is starts_at order (a day apart outweighs any DST shift).
  function* occurrencesOf(row: repo.SessionWithCreator): Generator<Item> {
    const pattern = seriesPattern(row, exceptions.get(row.id));
    if (pattern === null) return;
    for (const date of ruleDatesFrom(pattern, start)) {
      if (date > range.to) return;
      if (pattern.exceptions?.has(date) === true) continue;
      if (filters.completed !== undefined && (effectiveStatus(row, date, hostCompleted) === 'completed') !== (filters.completed === 1)) continue;
      const item = { row, occurrence: occurrenceView(row, date) };
      if (after === undefined || before(after, sortKey(item))) yield item;
    }
  }
  return { items: takeMerged(series.map(occurrencesOf), (a, b) => before(sortKey(a), sortKey(b)), take), exceptions };
}

export async function listSessions(
  storage: Storage,
  user: AuthenticatedUser,
  query: ListSessionsQuery,
): Promise<{ data: Session[]; next_cursor: string | null }> {
  const errors = new FieldErrors();
  if (query.org_id !== undefined && !user.orgIds.includes(query.org_id)) errors.add('/org_id', 'is not one of your organizations');
  const range = rangeOf(query, errors);
  errors.throwIfAny();
  const limit = query.limit ?? DEFAULT_LIMIT;
  const after = query.cursor === undefined ? undefined : toSortKey(decodeCursor(query.cursor, ['string', 'number'] as const));
  const filters: repo.SessionFilters = {
    orgIds: query.org_id === undefined ? user.orgIds : [query.org_id],
    channel: query.channel,
    type: query.type,
    completed: query.completed,
    source: query.source,
    keyword: query.keyword,
  };
  // One extra item tells whether another page follows.
  let items: Item[];
  // Series on the page had their exceptions read to be expanded; a one-off session has none.
  let exceptions: Map<number, Set<string>> | undefined;
  if (range === undefined) {
    items = (await repo.listSessions(storage.db, storage.dialect, user, filters, after, limit + 1)).map((row) => ({ row }));
  } else {
    const [oneOff, series] = await Promise.all([
      repo.listOneOffInRange(storage.db, storage.dialect, user, filters, range.from, range.to, after, limit + 1),
      seriesItems(storage, user, filters, range, after, limit + 1),
    ]);
    exceptions = series.exceptions;
    items = [...oneOff.map((row) => ({ row, occurrence: { date: row.schedule, starts_at: row.starts_at, ends_at: row.ends_at } })), ...series.items];
    items.sort(byKey);
  }
  const page = items.slice(0, limit);
  const last = page.at(-1);
  return {
    data: await render(storage.db, page, exceptions),
    next_cursor: items.length > limit && last !== undefined ? encodeCursor([sortKey(last).startsAt, sortKey(last).id]) : null,
  };
}

const toSortKey = ([startsAt, id]: readonly [string, number]): SortKey => ({ startsAt, id });
