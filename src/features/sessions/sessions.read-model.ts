import type { Phase } from '../../domain/vocabulary.js';
import type { Db } from '../../storage/database.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { addDays } from '../recurrence/recurrence.dates.js';
import { todayIn } from '../recurrence/recurrence.time.js';
import type { SessionsContext } from './sessions.context.js';
import { FULLY_INDEXED, type IndexedDate, type NextDate, nextListOf } from './sessions.occurrence-index.js';
import type { KeySeen, SessionFilters } from './sessions.listing-filters.js';
import { type RecordExtras, recordText, toSession } from './sessions.rendering.js';
import { ONE_OFF, nextOccurrence, occurrenceView, phaseAt, seriesPhase, utcToday } from './sessions.occurrences.js';
import { type OverrideFields, type Overrides, fieldsOf, overriddenRow } from './sessions.overrides.js';
import { occurrenceKey } from './sessions.participants-repository.js';
import { type SessionWithCreator, collaboratorsOf } from './sessions.repository.js';
import type { Participation, Session } from './sessions.schema.js';
import { type Series, loadSeries, rruleOf } from './sessions.series.js';

/** One item of a response: a session as a whole (a series once), or one of its days. */
export interface ItemKey {
  id: number;
  occurrence?: { date: string; starts_at: string; ends_at: string; completed: boolean };
  /** What a listing's keys statement read with the key (its visibility decided): loadItems reads neither again. */
  seen?: KeySeen;
}

/** Everything the records of a set of items show, read in a fixed number of queries. */
export interface ReadSet {
  rows: ReadonlyMap<number, SessionWithCreator>;
  collaborators: ReadonlyMap<number, string[]>;
  /** Per item (by position): the occurrence whose participants it counts, ONE_OFF, or null (a series that has ended). */
  counted: readonly (string | null)[];
  counts: ReadonlyMap<string, number>;
  /** The caller's participation rows, by occurrenceKey; only when asked for. */
  participation?: ReadonlyMap<string, { joined_at: string; completed_at: string | null }>;
  /** The rrule of series stored before rrule was kept, derived (rruleOf), by id: the rows stay as read. */
  rrules: ReadonlyMap<number, string | null>;
  /** The clock the records' `phase` is told by. */
  now: Date;
  /** A whole series' phase, by id, for every series the index holds dates of from yesterday on. */
  seriesPhases: ReadonlyMap<number, Phase>;
  /** The overrides of the dated items' occurrences (and of the next one of a series expanded here), by occurrenceKey. */
  overrides: Overrides;
}

export interface LoadQuery {
  user: AuthenticatedUser;
  items: readonly ItemKey[];
  /** For listings: rows are read again under the listing's visibility and filters. */
  listing?: { filters: SessionFilters };
  participation?: boolean;
  now?: Date;
}

/**
 * Loads what `items` show: the rows, collaborators, the occurrence each item counts
 * participants of (for a series shown as a whole: its next one), those counts, and
 * optionally the caller's participation. Four queries whatever the page, plus one in the
 * rare case a series is not in the occurrence index far enough; none for a listing page whose
 * keys came `seen` (with their counts, a dated key's override, a series' next dates) and whose
 * rows are kept.
 */
export async function loadItems(ctx: SessionsContext, db: Db, q: LoadQuery): Promise<ReadSet> {
  const ids = q.items.map((i) => i.id);
  const versions = new Map(q.items.flatMap((i) => (i.seen === undefined ? [] : [[i.id, i.seen.version] as const])));
  const rows = await ctx.sessions.byIds(db, { ids, ...(q.listing === undefined ? {} : { listing: { user: q.user, filters: q.listing.filters }, seen: versions }) });
  const wholeSeries = q.items.filter((i) => i.occurrence === undefined && rows.get(i.id)?.is_recurring === 1);
  const now = q.now ?? new Date();
  const collaborators = new Map([...rows.values()].map((r) => [r.id, collaboratorsOf(r)]));
  const from = nextDatesFrom(now);
  const seenNext = seenNextDates(wholeSeries, rows, from);
  const unseen = wholeSeries.filter((i) => !seenNext.has(i.id)).map((i) => i.id);
  const next = new Map([...[...seenNext].flatMap(([id, dates]) => (dates === undefined ? [] : [[id, dates] as const])), ...(await ctx.index.nextDates(db, { sessionIds: unseen, from }))]);
  // A whole series counts its next occurrence (the index's first date from the series' today).
  const indexedNext = new Map<number, string | undefined>();
  for (const { id } of wholeSeries) {
    const row = rows.get(id) as SessionWithCreator;
    const today = todayIn(row.timezone, now);
    indexedNext.set(id, next.get(id)?.find((d) => d.date >= today)?.date);
  }
  // Only a series the index does not reach far enough (or stored before rrule was kept) is
  // expanded here, and only such series need their removed occurrences read.
  const stale = [...rows.values()].filter(
    (r) => r.is_recurring === 1 && (r.rrule === null || (indexedNext.has(r.id) && indexedNext.get(r.id) === undefined && r.indexed_through !== FULLY_INDEXED)),
  );
  const series = stale.length === 0 ? new Map<number, Series<SessionWithCreator>>() : await loadSeries(ctx.sessions, db, stale);

  const counted = q.items.map((item): string | null => {
    const row = rows.get(item.id);
    if (row === undefined || row.is_recurring !== 1) return ONE_OFF;
    if (item.occurrence !== undefined) return item.occurrence.date;
    const indexed = indexedNext.get(row.id);
    const pattern = series.get(row.id)?.pattern ?? null;
    if (indexed !== undefined || !series.has(row.id)) return indexed ?? null;
    return pattern === null ? null : nextOccurrence(row, pattern, now);
  });
  const countKeys = q.items.flatMap((item, i) => (counted[i] === null ? [] : [{ sessionId: item.id, date: counted[i] as string }]));
  const known = knownCounts(q.items, counted, rows, next);
  // The overrides a record shows: a dated item's, and the next occurrence's of a series the
  // index does not hold far enough (its phase); an indexed series' phase takes the index's instants.
  const seen = seenOverrides(q.items, rows);
  const overrideKeys = q.items.flatMap((item, i) =>
    (item.occurrence !== undefined || series.has(item.id)) && counted[i] !== null && counted[i] !== ONE_OFF && !seen.has(occurrenceKey(item.id, counted[i] as string)) ? [{ sessionId: item.id, date: counted[i] as string }] : [],
  );
  const [counts, participation, read] = await Promise.all([
    ctx.participants.counts(db, countKeys.filter((k) => !known.has(occurrenceKey(k.sessionId, k.date))).map((k) => ({ sessionId: k.sessionId, occurrenceDate: k.date }))),
    q.participation === true ? ctx.participants.ofUser(db, { userId: q.user.id, keys: countKeys }) : undefined,
    ctx.overrides.at(db, overrideKeys),
  ]);
  const overrides = new Map([...[...seen].flatMap(([key, fields]) => (fields === null ? [] : [[key, fields] as const])), ...read]);
  const seriesPhases = wholeSeriesPhases(rows, next, now);
  const rrules = new Map(stale.filter((r) => r.rrule === null).map((r) => [r.id, rruleOf(r, series.get(r.id)?.exceptions)]));
  return { rows, collaborators, counted, counts: new Map([...known, ...counts]), rrules, now, seriesPhases, overrides, ...(participation === undefined ? {} : { participation }) };
}

/** Where a listing reads a whole series' next dates from: every zone's today is at most a day before UTC's, and three dates from there reach each one's next. */
export function nextDatesFrom(now: Date): string {
  return addDays(utcToday(now), -1);
}

/**
 * The next dates read beside undated keys (KeySeen.next), by id (undefined: none indexed), of the
 * series whose row is as the keys statement saw it and whose dates start where this load's do.
 */
function seenNextDates(items: readonly ItemKey[], rows: ReadonlyMap<number, SessionWithCreator>, from: string): Map<number, NextDate[] | undefined> {
  const out = new Map<number, NextDate[] | undefined>();
  for (const item of items) {
    const seen = item.seen?.next;
    if (seen === undefined || seen.from !== from || !asSeen(item, rows)) continue;
    out.set(item.id, seen.list === null ? undefined : nextListOf(seen.list));
  }
  return out;
}

/** Whether the item's row is as the keys statement saw it: only then is what it read beside the key used. */
function asSeen(item: ItemKey, rows: ReadonlyMap<number, SessionWithCreator>): boolean {
  return item.seen !== undefined && rows.get(item.id)?.row_version === item.seen.version;
}

/**
 * The overrides read beside dated keys (KeySeen.override), by occurrenceKey (null: none), of the
 * items whose row is as the keys statement saw it: as with counts, a changed row is read afresh.
 */
function seenOverrides(items: readonly ItemKey[], rows: ReadonlyMap<number, SessionWithCreator>): Map<string, OverrideFields | null> {
  const out = new Map<string, OverrideFields | null>();
  for (const item of items) {
    const stored = item.seen?.override;
    if (item.occurrence === undefined || stored === undefined || !asSeen(item, rows)) continue;
    out.set(occurrenceKey(item.id, item.occurrence.date), stored === null ? null : fieldsOf(stored));
  }
  return out;
}

/**
 * The counts read beside the keys, by occurrenceKey: a listing key's (when its row is as the keys
 * statement saw it, so that it counted the same occurrence) and the next dates' of a whole series.
 */
function knownCounts(
  items: readonly ItemKey[],
  counted: readonly (string | null)[],
  rows: ReadonlyMap<number, SessionWithCreator>,
  next: ReadonlyMap<number, readonly NextDate[]>,
): Map<string, number> {
  const out = new Map<string, number>();
  items.forEach((item, i) => {
    const date = counted[i];
    if (date === null || date === undefined) return;
    const key = occurrenceKey(item.id, date);
    const joined = item.seen?.joined ?? null;
    if (joined !== null && asSeen(item, rows)) out.set(key, joined);
    else if (item.occurrence === undefined) {
      const indexed = next.get(item.id)?.find((d) => d.date === date);
      if (indexed !== undefined) out.set(key, indexed.joined);
    }
  });
  return out;
}

/**
 * A whole series' phase, from its indexed occurrences: that of the first not over yet
 * (yesterday's may still run), at the instants the index holds (an override's); when all
 * are over, `ended` if the last was the series' last day, else `upcoming` (one follows).
 */
function wholeSeriesPhases(rows: ReadonlyMap<number, SessionWithCreator>, next: ReadonlyMap<number, readonly IndexedDate[]>, now: Date): Map<number, Phase> {
  const out = new Map<number, Phase>();
  const nowIso = now.toISOString();
  for (const [id, dates] of next) {
    const live = dates.find((o) => o.ends_at > nowIso);
    const ends = rows.get(id)?.recurring_ends ?? null;
    const last = dates.at(-1)?.date;
    out.set(id, live !== undefined ? phaseAt(live, now) : ends !== null && last !== undefined && last >= ends ? 'ended' : 'upcoming');
  }
  return out;
}

/** The caller's participation in the counted occurrence; the creator is the host and always counts as joined. */
function participationOf(row: SessionWithCreator, collaborators: readonly string[], user: AuthenticatedUser, p: { joined_at: string; completed_at: string | null } | undefined): Participation {
  if (row.created_by === user.id) {
    // joined_at is set once, at creation, whatever happens to the row later.
    return { joined: true, role: 'host', joined_at: row.created_at, completed_at: p?.completed_at ?? null };
  }
  const role = collaborators.includes(user.handle) ? 'collaborator' : p !== undefined ? 'participant' : null;
  return { joined: p !== undefined, role, joined_at: p?.joined_at ?? null, completed_at: p?.completed_at ?? null };
}

/**
 * The records of `items` from what loadItems read: pure, no queries. An item whose row is
 * gone is left out. In a `listing`, an occurrence's rrule leaves out the EXDATE lines, so
 * that a page of one series' days does not repeat its removed-occurrence list on each.
 */
export function renderItems(set: ReadSet, items: readonly ItemKey[], user: AuthenticatedUser, opts: { listing?: boolean } = {}): Session[] {
  return recordInputs(set, items, user, opts).map((r) => toSession(r.row, r.extras));
}

/** renderItems' records as JSON text (recordText): what a listing's page is assembled from. */
export function renderTexts(set: ReadSet, items: readonly ItemKey[], user: AuthenticatedUser, opts: { listing?: boolean } = {}): string[] {
  return recordInputs(set, items, user, opts).map((r) => recordText(r.row, r.extras));
}

/** Each shown item's row and what its record shows besides (renderItems). */
function recordInputs(set: ReadSet, items: readonly ItemKey[], user: AuthenticatedUser, opts: { listing?: boolean }): { row: SessionWithCreator; extras: RecordExtras }[] {
  const out: { row: SessionWithCreator; extras: RecordExtras }[] = [];
  items.forEach((item, i) => {
    const stored = set.rows.get(item.id);
    if (stored === undefined) return;
    // An occurrence shows what its override sets (name, time, blocker…) over the series'.
    const row = item.occurrence === undefined ? stored : overriddenRow(stored, set.overrides.get(occurrenceKey(item.id, item.occurrence.date)));
    const collaborators = set.collaborators.get(item.id) ?? [];
    const counted = set.counted[i] ?? null;
    const key = counted === null ? undefined : occurrenceKey(item.id, counted);
    // The host always counts as joined.
    const participantsCount = 1 + (key === undefined ? 0 : (set.counts.get(key) ?? 0));
    const { occurrence } = item;
    const phase =
      occurrence !== undefined
        ? phaseAt(occurrence, set.now)
        : row.is_recurring === 1
          ? (set.seriesPhases.get(item.id) ?? seriesPhase(row, counted, set.now, counted === null ? undefined : set.overrides.get(occurrenceKey(item.id, counted))))
          : phaseAt(row, set.now);
    out.push({
      row,
      extras: {
        collaborators,
        ruleOnly: opts.listing === true && occurrence !== undefined,
        participantsCount,
        phase,
        rrule: set.rrules.get(item.id),
        ...(occurrence === undefined
          ? {}
          : { occurrence: { date: occurrence.date, starts_at: occurrence.starts_at, ends_at: occurrence.ends_at, status: occurrence.completed ? 'completed' : row.status } }),
        ...(set.participation === undefined
          ? {}
          : { participation: participationOf(row, collaborators, user, key === undefined ? undefined : set.participation.get(key)) }),
      },
    });
  });
  return out;
}

/**
 * The items requests about one day each show: for ONE_OFF a one-off session as a whole;
 * for a date, the session on that day with its instants and whether it is completed (the
 * session is, or for a series its host completed that day; a host completing a one-off
 * session completes the session). One read of host completions for all.
 */
export async function occurrenceItems(ctx: SessionsContext, db: Db, wanted: readonly { row: SessionWithCreator; date: string }[]): Promise<ItemKey[]> {
  const dated = wanted.filter((w) => w.date !== ONE_OFF && w.row.is_recurring === 1 && w.row.status !== 'completed');
  const dates = dated.map((w) => w.date).sort();
  const [done, overrides] = await Promise.all([
    dated.length === 0
      ? new Set<string>()
      : ctx.participants.hostCompletions(db, { sessionIds: dated.map((w) => w.row.id), from: dates[0] as string, to: dates.at(-1) as string }),
    ctx.overrides.at(db, wanted.filter((w) => w.date !== ONE_OFF && w.row.is_recurring === 1).map((w) => ({ sessionId: w.row.id, date: w.date }))),
  ]);
  return wanted.map(({ row, date }) => {
    if (date === ONE_OFF) return { id: row.id };
    const completed = row.status === 'completed' || (row.is_recurring === 1 && done.has(occurrenceKey(row.id, date)));
    const view = occurrenceView(row, date, overrides.get(occurrenceKey(row.id, date)));
    return { id: row.id, occurrence: { date, starts_at: view.starts_at, ends_at: view.ends_at, completed } };
  });
}

/** occurrenceItems of one request. */
export const occurrenceItem = async (ctx: SessionsContext, db: Db, row: SessionWithCreator, date: string): Promise<ItemKey> =>
  (await occurrenceItems(ctx, db, [{ row, date }]))[0] as ItemKey;
