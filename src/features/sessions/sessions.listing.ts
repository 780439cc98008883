import type { Static } from 'typebox';
import { PAGE_BYTE_BUDGET } from '../../toolkit/api.js';
import { FieldErrors } from '../../toolkit/errors.js';
import { decodeCursor, encodeCursor } from '../../toolkit/paging.js';
import { type SerializedBody, serializedBody } from '../../toolkit/serialization.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { addDays, compareDates, daysBetween } from '../recurrence/recurrence.dates.js';
import type { SessionsContext } from './sessions.context.js';
import type { DatedKey } from './sessions.occurrence-index.js';
import type { SessionFilters } from './sessions.listing-filters.js';
import { occurrencesIn } from './sessions.occurrence-source.js';
import { type ItemKey, loadItems, nextDatesFrom, renderTexts } from './sessions.read-model.js';
import { LAST_SESSION_DATE } from './sessions.schema.js';
import type { ListSessionsQuery, SessionList } from './sessions.route-schema.js';

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

type After = Pick<DatedKey, 'startsAt' | 'id' | 'date'>;

export async function listSessions(
  ctx: SessionsContext,
  user: AuthenticatedUser,
  query: ListSessionsQuery,
): Promise<SerializedBody<Static<typeof SessionList>>> {
  const errors = new FieldErrors();
  if (query.org_id !== undefined && !user.orgIds.includes(query.org_id)) errors.add('/org_id', 'is not one of your organizations');
  const range = rangeOf(query, errors);
  errors.throwIfAny();
  const limit = query.limit ?? DEFAULT_LIMIT;
  const filters: SessionFilters = {
    orgIds: query.org_id === undefined ? user.orgIds : [query.org_id],
    channel: query.channel,
    type: query.type,
    completed: query.completed,
    source: query.source,
    keyword: query.keyword,
  };
  // The keyword is tested only on rows the visibility streams read (foldedContains), never
  // looked up in the instance-wide substring index first: what that lookup found, and
  // how long it took, depended on other tenants' private sessions (issue 34, M3; contract
  // section 13, search timing).
  // One extra key tells whether another page follows.
  let items: ItemKey[];
  // Each item's sort key; only the last one shown becomes the cursor (encoded once, not per item).
  let cursorKeys: (string | number)[][];
  let more: boolean;
  if (range === undefined) {
    const after = query.cursor === undefined ? undefined : undatedCursor(query.cursor);
    // A series' next dates read with its key: a page of kept rows is one statement.
    const keys = await ctx.sessions.keys({ user, filters, after, limit: limit + 1, nextFrom: nextDatesFrom(new Date()) });
    more = keys.length > limit;
    items = keys.slice(0, limit).map((k) => ({ id: k.id, seen: k.seen }));
    cursorKeys = keys.slice(0, limit).map((k) => [k.startsAt, k.id]);
  } else {
    const after = query.cursor === undefined ? undefined : datedCursor(query.cursor);
    const keys = await occurrencesIn(ctx, { user, filters, range, after, limit: limit + 1 });
    more = keys.length > limit;
    const page = keys.slice(0, limit);
    items = page.map((k) => ({ id: k.id, occurrence: { date: k.date, starts_at: k.startsAt, ends_at: k.endsAt, completed: k.completed }, ...(k.seen === undefined ? {} : { seen: k.seen }) }));
    cursorKeys = page.map((k) => [k.startsAt, k.id, k.date]);
  }
  const { shown, lastConsumed, cut } = await renderWithinBudget(ctx, user, items, filters);
  const last = (more || cut) && lastConsumed >= 0 ? cursorKeys[lastConsumed] : undefined;
  // The page assembled from its records' texts, in SessionList's order (data, then next_cursor).
  return serializedBody(`{"data":[${shown.join(',')}],"next_cursor":${JSON.stringify(last === undefined ? null : encodeCursor(last))}}`);
}

/** The first round of a page loads this many items; a later one as many as the bytes seen so far say still fit. */
const FIRST_ROUND = DEFAULT_LIMIT;
const MAX_ROUNDS = 3;

/**
 * Loads and renders `items` in rounds until the page holds PAGE_BYTE_BUDGET, so a page of
 * heavy records reads about as many as it shows rather than all `limit` of them (a default
 * page is one round, a page of 500 ordinary sessions two). A row is shown as its keys statement
 * saw it (kept) or as read afterwards; one read afterwards that no longer qualifies is left
 * out, and the cursor still moves past it.
 */
async function renderWithinBudget(
  ctx: SessionsContext,
  user: AuthenticatedUser,
  items: ItemKey[],
  filters: SessionFilters,
): Promise<{ shown: string[]; lastConsumed: number; cut: boolean }> {
  const shown: string[] = [];
  let bytes = 0;
  let consumed = 0;
  for (let round = 0; round < MAX_ROUNDS && consumed < items.length; round++) {
    const average = shown.length === 0 ? 0 : bytes / shown.length;
    const size = round === 0 ? FIRST_ROUND : average === 0 ? items.length : Math.ceil((PAGE_BYTE_BUDGET - bytes) / average) + 1;
    const chunk = items.slice(consumed, consumed + size);
    const set = await loadItems(ctx, ctx.storage.db, { user, items: chunk, listing: { filters } });
    const records = renderTexts(set, chunk, user, { listing: true });
    let next = 0;
    for (let i = 0; i < chunk.length; i++) {
      // renderTexts leaves out exactly the items whose row it did not read.
      if (!set.rows.has((chunk[i] as ItemKey).id)) continue;
      const record = records[next++] as string;
      const weight = Buffer.byteLength(record);
      if (shown.length > 0 && bytes + weight > PAGE_BYTE_BUDGET) return { shown, lastConsumed: consumed + i - 1, cut: true };
      shown.push(record);
      bytes += weight;
    }
    consumed += chunk.length;
  }
  return { shown, lastConsumed: consumed - 1, cut: consumed < items.length };
}

const undatedCursor = (cursor: string) => {
  const [startsAt, id] = decodeCursor(cursor, ['string', 'number'] as const);
  return { startsAt, id };
};

const datedCursor = (cursor: string): After => {
  const [startsAt, id, date] = decodeCursor(cursor, ['string', 'number', 'string'] as const);
  return { startsAt, id, date };
};
