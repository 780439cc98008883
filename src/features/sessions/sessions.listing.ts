import { FieldErrors } from '../../toolkit/errors.js';
import { decodeCursor, encodeCursor } from '../../toolkit/paging.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { addDays, compareDates, daysBetween } from '../recurrence/recurrence.dates.js';
import { ruleDatesFrom } from '../recurrence/recurrence.engine.js';
import { takeMerged } from './sessions.merge.js';
import type { SessionsContext } from './sessions.context.js';
import type { RecurrenceRow } from './sessions.model.js';
import { type OccurrenceView, occurrenceView, seriesPattern } from './sessions.occurrences.js';
import { type Item, type KnownState, effectiveStatus, render } from './sessions.records.js';
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

type PageKey = repo.PageKey;

/** A place in a dated listing: a one-off session's day, or one occurrence of a series. */
interface Slot {
  key: PageKey;
  occurrence?: OccurrenceView;
}
const slotBefore = (a: Slot, b: Slot) => repo.keyBefore(a.key, b.key);

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
 * Series that may occur in the range, expanded lazily into one slot per occurrence after
 * the cursor and merged in listing order: only the first `take` slots of the merge are
 * ever computed. `completed` is decided per occurrence (its host may have completed just
 * that one), so it is applied here rather than in SQL.
 */
async function seriesSlots(
  ctx: SessionsContext,
  user: AuthenticatedUser,
  filters: repo.SessionFilters,
  range: { from: string; to: string },
  after: PageKey | undefined,
  take: number,
): Promise<{ slots: Slot[]; known: KnownState }> {
  const { db } = ctx.storage;
  const series = await ctx.sessions.seriesOverlapping({ user, filters: sqlFiltersOf(filters), ...range });
  const ids = series.map((s) => s.id);
  const [exceptions, hostCompleted] = await Promise.all([
    ctx.sessions.exceptionsOf(db, ids),
    ctx.participants.hostCompletions(db, { sessionIds: ids, ...range }),
  ]);
  const start = after === undefined ? range.from : firstDayAfter(after.startsAt, range.from);

  // Within one series, date order is starts_at order (a day apart outweighs any DST shift).
  function* occurrencesOf(row: RecurrenceRow): Generator<Slot> {
    const pattern = seriesPattern(row, exceptions.get(row.id));
    if (pattern === null) return;
    for (const date of ruleDatesFrom(pattern, start)) {
      if (date > range.to) return;
      if (pattern.exceptions?.has(date) === true) continue;
      if (filters.completed !== undefined && (effectiveStatus(row, date, hostCompleted) === 'completed') !== (filters.completed === 1)) continue;
      const occurrence = occurrenceView(row, date);
      const slot = { key: { startsAt: occurrence.starts_at, id: row.id }, occurrence };
      if (after === undefined || repo.keyBefore(after, slot.key)) yield slot;
    }
  }
  return { slots: takeMerged(series.map(occurrencesOf), slotBefore, take), known: { exceptions, hostCompleted } };
}

/** A completed series has only completed occurrences, so "not completed" can still be filtered in SQL; "completed" cannot. */
const sqlFiltersOf = (filters: repo.SessionFilters): repo.SessionFilters =>
  filters.completed === 1 ? { ...filters, completed: undefined } : filters;

export async function listSessions(
  ctx: SessionsContext,
  user: AuthenticatedUser,
  query: ListSessionsQuery,
): Promise<{ data: Session[]; next_cursor: string | null }> {
  const errors = new FieldErrors();
  if (query.org_id !== undefined && !user.orgIds.includes(query.org_id)) errors.add('/org_id', 'is not one of your organizations');
  const range = rangeOf(query, errors);
  errors.throwIfAny();
  const limit = query.limit ?? DEFAULT_LIMIT;
  const after = query.cursor === undefined ? undefined : toPageKey(decodeCursor(query.cursor, ['string', 'number'] as const));
  const filters: repo.SessionFilters = {
    orgIds: query.org_id === undefined ? user.orgIds : [query.org_id],
    channel: query.channel,
    type: query.type,
    completed: query.completed,
    source: query.source,
    keyword: query.keyword,
  };
  // One extra slot tells whether another page follows.
  let slots: Slot[];
  // Series on the page were read to be expanded (exceptions, host completions); a one-off session has none.
  let known: KnownState = {};
  if (range === undefined) {
    slots = (await ctx.sessions.keys({ user, filters, after, limit: limit + 1 })).map((key) => ({ key }));
  } else {
    const [oneOff, series] = await Promise.all([
      ctx.sessions.oneOffKeysInRange({ user, filters, ...range, after, limit: limit + 1 }),
      seriesSlots(ctx, user, filters, range, after, limit + 1),
    ]);
    known = series.known;
    slots = [...oneOff.map((key) => ({ key })), ...series.slots].sort((a, b) => repo.compareKeys(a.key, b.key));
  }
  const page = slots.slice(0, limit);
  // Only the page's rows are read; one changed meanwhile so that it no longer qualifies is left out.
  const rows = await ctx.sessions.byIds({ user, filters: sqlFiltersOf(filters), ids: page.map((s) => s.key.id) });
  const items: Item[] = page.flatMap(({ key, occurrence }) => {
    const row = rows.get(key.id);
    if (row === undefined) return [];
    if (range === undefined) return [{ row }];
    return [{ row, occurrence: occurrence ?? { date: row.schedule, starts_at: row.starts_at, ends_at: row.ends_at } }];
  });
  const last = page.at(-1);
  return {
    data: await render(ctx, ctx.storage.db, items, known),
    next_cursor: slots.length > limit && last !== undefined ? encodeCursor([last.key.startsAt, last.key.id]) : null,
  };
}

const toPageKey = ([startsAt, id]: readonly [string, number]): PageKey => ({ startsAt, id });
