import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { addDays, compareDates } from '../recurrence/recurrence.dates.js';
import { isOccurrence, ruleDatesFrom } from '../recurrence/recurrence.engine.js';
import type { SessionsContext } from './sessions.context.js';
import type { IndexedInstant } from './sessions.instant-reads.js';
import type { SessionFilters } from './sessions.listing-filters.js';
import { takeMerged } from './sessions.merge.js';
import { type DatedKey, datedBefore } from './sessions.occurrence-index.js';
import { ONE_OFF, floorOn, occurrenceView, utcToday } from './sessions.occurrences.js';
import { type OverrideFields, type Overrides, dayOf, movedDates, movesDay } from './sessions.overrides.js';
import { occurrenceKey } from './sessions.participants-repository.js';
import type { UnindexedSession } from './sessions.repository.js';
import type { UnindexedSide } from './sessions.statements.js';
import { type Series, loadSeries } from './sessions.series.js';

/*
 * The one occurrence source: occurrences in a window or at an instant, from the occurrence
 * index merged with the per-request expansion of what it does not hold (before its floor,
 * beyond its horizon, or not indexed yet). Listings, /me/now, the event stream and the
 * webhook clock all read occurrences here.
 */

type Range = { from: string; to: string };
type After = Pick<DatedKey, 'startsAt' | 'id' | 'date'>;
/** A dated listing's page: its keys after `after`, at most `limit`. */
type DatedQuery = { user: AuthenticatedUser; filters: SessionFilters; range: Range; after: After | undefined; limit: number };
type Expandable = Omit<UnindexedSession, 'indexed_from'>;

/** The occurrences an expansion reads: each session's, removed ones left out, completion from the session and its host, and overrides. */
async function expandable<S extends Expandable>(ctx: SessionsContext, sessions: readonly S[], completions: Range) {
  const ids = sessions.map((s) => s.id);
  const [series, hostCompleted, overrides] = await Promise.all([
    loadSeries(ctx.sessions, ctx.storage.db, sessions),
    ctx.participants.hostCompletions(ctx.storage.db, { sessionIds: ids, ...completions }),
    ctx.overrides.of(ctx.storage.db, ids.filter((_, i) => sessions[i]?.is_recurring === 1)),
  ]);
  return { series, hostCompleted, overrides };
}

/**
 * A session's occurrences on or after `start`, in date order (within one session that is
 * starts_at order: a day apart outweighs any DST shift), expanded from its pattern; unbounded,
 * the caller stops. Occurrences an override moved to another day are left out: they would
 * break that order, and the index holds them (movedKeys gives them for a session it does not
 * hold at all). The one per-request expansion.
 */
function* expandedKeys(s: Series<Expandable>, hostCompleted: ReadonlySet<string>, start: string, overrides: Overrides): Generator<DatedKey> {
  const { row, pattern } = s;
  const dates = pattern === null ? [row.schedule] : ruleDatesFrom(pattern, start);
  for (const date of dates) {
    if (date < start || pattern?.exceptions?.has(date) === true) continue;
    const fields = overrides.get(occurrenceKey(row.id, date));
    if (movesDay(date, fields)) continue;
    yield keyOf(s, date, fields, hostCompleted);
  }
}

/** The listing key of a session's occurrence on `date`, at its override's instants. */
function keyOf({ row }: Series<Expandable>, date: string, fields: OverrideFields | undefined, hostCompleted: ReadonlySet<string>): DatedKey {
  const view = occurrenceView(row, date, fields);
  return { startsAt: view.starts_at, id: row.id, date, endsAt: view.ends_at, completed: row.status === 'completed' || hostCompleted.has(occurrenceKey(row.id, date)) };
}

/** The moved occurrences of a session the index holds none of (stored before it, not indexed yet), by start. */
function movedKeys(s: Series<Expandable & { indexed_through: string | null }>, hostCompleted: ReadonlySet<string>, overrides: Overrides): DatedKey[] {
  if (s.row.indexed_through !== null || s.pattern === null) return [];
  const pattern = s.pattern;
  const keys = movedDates(overrides, s.row.id)
    .filter((date) => isOccurrence(pattern, date))
    .map((date) => keyOf(s, date, overrides.get(occurrenceKey(s.row.id, date)), hostCompleted));
  return keys.sort(byListingOrder);
}

/** Expanded keys with a session's moved ones (both in listing order) merged in, lazily. */
function* withMoved(keys: Iterable<DatedKey>, moved: readonly DatedKey[]): Generator<DatedKey> {
  let i = 0;
  for (const key of keys) {
    for (; i < moved.length && datedBefore(moved[i] as DatedKey, key); i++) yield moved[i] as DatedKey;
    yield key;
  }
  yield* moved.slice(i);
}

const minDate = (a: string, b: string) => (compareDates(a, b) <= 0 ? a : b);
const within = (day: string, r: Range) => day >= r.from && day <= r.to;

/** The spans of [from, to] the index does not hold for a session ([indexed_from, indexed_through] it does). */
function unindexedSpans(s: UnindexedSession, range: Range): [string, string][] {
  if (s.indexed_through === null) return [[range.from, range.to]];
  const spans: [string, string][] = [];
  if (s.indexed_from !== null && range.from < s.indexed_from) spans.push([range.from, minDate(range.to, addDays(s.indexed_from, -1))]);
  if (s.indexed_through < range.to) spans.push([s.indexed_through < range.from ? range.from : addDays(s.indexed_through, 1), range.to]);
  return spans;
}

/**
 * Occurrences of sessions the index does not hold far enough (stored before it existed, or
 * a listing beyond a series' horizon), expanded per request: lazily, after the cursor, and
 * merged so that only the first `take` are ever computed.
 */
async function expandedPage(ctx: SessionsContext, q: DatedQuery, sides: readonly UnindexedSide[]): Promise<DatedKey[]> {
  const { user, filters, range, after, limit: take } = q;
  const found = await Promise.all(sides.map((side) => ctx.sessions.unindexedInRange({ user, filters, ...range, side })));
  // A session unindexed on both sides is expanded once.
  const sessions = [...new Map(found.flat().map((s) => [s.id, s])).values()];
  if (sessions.length === 0) return [];
  const { series, hostCompleted, overrides } = await expandable(ctx, sessions, range);
  function* keysOf(s: UnindexedSession): Generator<DatedKey> {
    for (const [start, end] of unindexedSpans(s, range)) {
      for (const key of expandedKeys(series.get(s.id) as Series<Expandable>, hostCompleted, start, overrides)) {
        if (key.date > end) break;
        if (wanted(key)) yield key;
      }
    }
  }
  const wanted = (key: DatedKey) => (filters.completed === undefined || key.completed === (filters.completed === 1)) && (after === undefined || datedBefore(after, key));
  // Listed by the day it takes place on.
  const moved = (s: UnindexedSession) => {
    const keys = movedKeys(series.get(s.id) as Series<UnindexedSession>, hostCompleted, overrides);
    return keys.filter((k) => wanted(k) && within(dayOf(k.date, overrides.get(occurrenceKey(s.id, k.date))), range)).values();
  };
  return takeMerged([...sessions.map(keysOf), ...sessions.map(moved)], datedBefore, take);
}

const byListingOrder = (a: DatedKey, b: DatedKey) => (datedBefore(a, b) ? -1 : datedBefore(b, a) ? 1 : 0);
const dedupeSorted = (keys: DatedKey[]) => [...new Map(keys.map((k) => [`${k.id}|${k.date}`, k])).values()].sort(byListingOrder);

/**
 * A dated listing's keys after the cursor, at most `limit`: the index's page merged with the
 * expansion's. The page's statement tells whether any session may be indexed not far enough
 * ahead: mostly not, and then a listing of days from today's floor on (with two days' margin for
 * other instances' clocks; before it a series' indexed_from can be) runs no other statement of keys.
 */
export async function occurrencesIn(ctx: SessionsContext, q: DatedQuery): Promise<DatedKey[]> {
  const indexed = await ctx.index.page({ user: q.user, filters: q.filters, ...q.range, after: q.after, limit: q.limit });
  const sides: UnindexedSide[] = [];
  if (indexed.unindexedAhead) sides.push('ahead');
  if (q.range.from < addDays(floorOn(utcToday()), 2)) sides.push('before');
  const expanded = sides.length === 0 ? [] : await expandedPage(ctx, q, sides);
  return expanded.length === 0 ? indexed.keys : dedupeSorted([...indexed.keys, ...expanded]).slice(0, q.limit);
}

/**
 * The longest a series goes without an occurrence (monthly on the 31st without fallback:
 * 31 August → 31 October). The occurrence index holds every series at least this far
 * ahead, or the series is expanded per request: so the next occurrence is never missed,
 * though the index itself reaches only 92 days ahead.
 */
const LONGEST_GAP_DAYS = 62;

export interface Around {
  running: DatedKey[];
  next: DatedKey | undefined;
}

/**
 * The user's occurrences running at `clock` (at most `limit`) and the first that starts
 * after it, over the sessions the user created, collaborates on or joined: three reads of
 * the index and the sessions it does not hold far enough (plus two when there are such).
 */
export async function occurrencesAt(ctx: SessionsContext, user: AuthenticatedUser, clock: Date, limit: number): Promise<Around> {
  const at = clock.toISOString();
  const today = at.slice(0, 10);
  // A local date is within a day of UTC's, and a session lasts at most a day.
  const from = addDays(today, -2);
  const to = addDays(today, 1);
  const [running, next, unindexed] = await Promise.all([
    ctx.instants.running({ user, at, from, to, limit }),
    ctx.instants.next({ user, at, from: addDays(today, -1) }),
    ctx.instants.unindexedOf({ user, through: addDays(today, LONGEST_GAP_DAYS + 1) }),
  ]);
  if (unindexed.length === 0) return { running, next };
  const { series, hostCompleted, overrides } = await expandable(ctx, unindexed, { from, to: addDays(today, 400) });
  const expanded: Around = { running: [], next: undefined };
  for (const s of unindexed) {
    const one = series.get(s.id) as Series<Expandable & { indexed_through: string | null }>;
    for (const key of withMoved(expandedKeys(one, hostCompleted, from, overrides), movedKeys(one, hostCompleted, overrides))) {
      if (key.startsAt > at) {
        if (expanded.next === undefined || datedBefore(key, expanded.next)) expanded.next = key;
        break;
      }
      if (key.endsAt > at && within(dayOf(key.date, overrides.get(occurrenceKey(s.id, key.date))), { from, to })) expanded.running.push(key);
    }
  }
  const merged = new Map([...running, ...expanded.running].map((k) => [`${k.id}|${k.date}`, k]));
  const candidates = [next, expanded.next].filter((k): k is DatedKey => k !== undefined).sort(byListingOrder);
  return { running: [...merged.values()].sort(byListingOrder).slice(0, limit), next: candidates[0] };
}

/** An occurrence that started or ended, and who is involved in it (involvedUsers). */
export interface Crossing {
  event: 'session.started' | 'session.ended';
  session_id: number;
  occurrence_date: string;
  starts_at: string;
  ends_at: string;
  org_id: number;
  users: ReadonlySet<number>;
  /** The instant it crossed: starts_at for a start, ends_at for an end. */
  at: string;
}

/**
 * Who is involved in an occurrence, the one statement of the rule: its session's creator
 * and collaborators, and those who joined that occurrence (a series) or the session (a
 * one-off, joined as ONE_OFF). `involvement`: the rows of instant-reads' involvement().
 */
export function involvedUsers(o: Pick<IndexedInstant, 'session_id' | 'occurrence_date' | 'created_by'>, involvement: ReadonlyMap<string, ReadonlySet<number>>): Set<number> {
  return new Set([o.created_by, ...(involvement.get(occurrenceKey(o.session_id, ONE_OFF)) ?? []), ...(involvement.get(occurrenceKey(o.session_id, o.occurrence_date)) ?? [])]);
}

/**
 * Occurrences that started or ended in (from, to], in time
 * order (an end before a start at the same instant), each with the users involved, from
 * the occurrence index (series are not expanded here): three statements per window.
 */
export async function occurrencesCrossing(
  ctx: SessionsContext,
  q: { from: string; to: string; limit?: number },
): Promise<Crossing[]> {
  const [started, ended] = await Promise.all([ctx.instants.crossing('starts_at', q), ctx.instants.crossing('ends_at', q)]);
  if (started.length === 0 && ended.length === 0) return [];
  const rows = await ctx.instants.involvement([...started, ...ended].map((o) => o.session_id));
  // By occurrence; who is involved in every occurrence is kept under ONE_OFF.
  const involvement = new Map<string, Set<number>>();
  for (const r of rows) {
    const key = occurrenceKey(r.session_id, r.occurrence_date ?? ONE_OFF);
    involvement.set(key, (involvement.get(key) ?? new Set()).add(r.user_id));
  }
  const of = (event: Crossing['event'], o: IndexedInstant): Crossing => ({
    event,
    session_id: o.session_id,
    occurrence_date: o.occurrence_date,
    starts_at: o.starts_at,
    ends_at: o.ends_at,
    org_id: o.org_id,
    users: involvedUsers(o, involvement),
    at: event === 'session.started' ? o.starts_at : o.ends_at,
  });
  const all = [...started.map((o) => of('session.started', o)), ...ended.map((o) => of('session.ended', o))];
  return all.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.event === 'session.ended' ? -1 : 1));
}
