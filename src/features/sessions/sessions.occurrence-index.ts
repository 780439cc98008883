import type { Db, Storage } from '../../storage/database.js';
import type { OccurrenceRow } from '../../storage/tables.js';
import { addDays } from '../recurrence/recurrence.dates.js';
import { type DatedPageQuery, type DatedPlace, indexStatements } from './sessions.occurrence-statements.js';
import { type KeySeen, readerOf, statementFilters } from './sessions.listing-filters.js';

/** A dated listing's key: its place (DatedPlace) and what the page shows of the occurrence. */
export interface DatedKey extends DatedPlace {
  endsAt: string;
  completed: boolean;
  /** Read with the key by a dated page's statement; not for keys expanded per request. */
  seen?: KeySeen;
}

export const datedBefore = (a: DatedPlace, b: DatedPlace) =>
  a.startsAt < b.startsAt || (a.startsAt === b.startsAt && (a.id < b.id || (a.id === b.id && a.date < b.date)));

/** An indexed occurrence's date and instants (an override's, when one moved it). */
export interface IndexedDate {
  date: string;
  starts_at: string;
  ends_at: string;
}

/** An indexed date of a series with its participants, as nextDates reads it. */
export type NextDate = IndexedDate & { joined: number };

/** nextDates' `date|starts_at|ends_at|joined` column read back (dates and ISO instants hold no `|`). */
function nextOf(column: string): NextDate {
  const [date, starts_at, ends_at, joined] = column.split('|') as [string, string, string, string];
  return { date, starts_at, ends_at, joined: Number(joined) };
}

/** A list of nextThreeList's entries read back, in date order (the list's order is not the statement's to keep). */
export function nextListOf(list: string): NextDate[] {
  return list.split(',').sort().map(nextOf);
}

/** The last date a fully indexed session holds: nothing after it will ever be added. */
export const FULLY_INDEXED = '9999-12-31';


/** A dated page's keys, and whether sessions may be indexed not far enough for its range (true also when the page had no row to say). */
export interface DatedPage {
  keys: DatedKey[];
  unindexedAhead: boolean;
}

export type OccurrenceIndex = ReturnType<typeof createOccurrenceIndex>;

/**
 * The occurrence index (session_occurrences): written in the transaction of every change to
 * a session's days, visibility or completion, and read by dated listings and time-triggered
 * events. Built once per storage.
 */
export function createOccurrenceIndex(storage: Storage) {
  return { ...indexReads(storage), ...indexWrites(storage) };
}


/** What a dated page and a whole series' next dates read of the index. */
function indexReads(storage: Storage) {
  const { pageQuery, nextDatesQuery } = indexStatements(storage);
  /**
   * The instants a dated page's occurrences start within: a local day starts within 14
   * hours of its UTC midnight either way, so bounding the instant as well lets an index
   * range scan start and stop near the range.
   */
  const instantsOf = (q: Pick<DatedPageQuery, 'from' | 'to'>) => ({ lowest: `${addDays(q.from, -1)}T00:00:00.000Z`, highest: `${addDays(q.to, 2)}T00:00:00.000Z` });

  return {
    /**
     * The keys of one dated page after the cursor: the first `limit` of each stream
     * (streamsFor), merged. What another member keeps private is in no stream.
     */
    async page(q: DatedPageQuery): Promise<DatedPage> {
      const rows = await pageQuery.execute(storage.db, { ...q, user: readerOf(q.user), filters: statementFilters(q.filters), ...instantsOf(q) });
      const keys = rows.map((r) => ({
        startsAt: r.starts_at,
        id: r.session_id,
        date: r.occurrence_date,
        endsAt: r.ends_at,
        completed: r.completed === 1,
        seen: { version: r.row_version, joined: Number(r.joined), override: r.override },
      }));
      return { keys, unindexedAhead: rows.length === 0 || rows[0]?.unindexed_ahead === 1 };
    },

    /**
     * The first three indexed occurrences (date, instants, participants other than the host) on or after `from` of each session: from the
     * day before UTC's today, a daily series' third is the today of a zone a day ahead of
     * UTC. One seek into the primary key per series, stopping at three: numbering every indexed date ahead read
     * all of them (a daily series holds a year and more), 2.5 ms for 50 series.
     */
    async nextDates(db: Db, q: { sessionIds: readonly number[]; from: string }): Promise<Map<number, NextDate[]>> {
      const out = new Map<number, NextDate[]>();
      if (q.sessionIds.length === 0) return out;
      const rows = await nextDatesQuery.execute(db, { sessionIds: [...new Set(q.sessionIds)], from: q.from });
      for (const r of rows) {
        if (r.dates !== null) out.set(r.id, nextListOf(r.dates));
      }
      return out;
    },

    /** The index rows of the given occurrences. */
    async rows(db: Db, keys: readonly { sessionId: number; date: string }[]): Promise<Map<string, OccurrenceRow>> {
      const out = new Map<string, OccurrenceRow>();
      if (keys.length === 0) return out;
      const rows = await db
        .selectFrom('session_occurrences')
        .selectAll()
        .where('session_id', 'in', [...new Set(keys.map((k) => k.sessionId))])
        .where('occurrence_date', 'in', [...new Set(keys.map((k) => k.date))])
        .execute();
      for (const r of rows) out.set(`${r.session_id}|${r.occurrence_date}`, r);
      return out;
    },
  };
}

/** What every change to a session's days, visibility or completion writes, in its transaction. */
function indexWrites(storage: Storage) {
  /** Rows per insert statement, within the engine's parameter limit. */
  const chunk = Math.max(1, Math.floor(storage.maxParameters / 10));

  return {
    /**
     * Writes the occurrences of many sessions at once: the indexed rows of the sessions in
     * `replace` are dropped first, every row of `rows` is added (one already there is kept),
     * and each session of `through` then holds its occurrences through that date (from the
     * date in `from`, for a session written anew). A few
     * statements per call whatever the number of sessions: the background indexer handles
     * thousands per step.
     */
    async write(
      db: Db,
      q: { replace: readonly number[]; rows: readonly OccurrenceRow[]; through: ReadonlyMap<number, string>; from?: ReadonlyMap<number, string | null> },
    ): Promise<void> {
      for (let i = 0; i < q.replace.length; i += storage.maxParameters) {
        await db.deleteFrom('session_occurrences').where('session_id', 'in', q.replace.slice(i, i + storage.maxParameters)).execute();
      }
      for (let i = 0; i < q.rows.length; i += chunk) {
        await db
          .insertInto('session_occurrences')
          .values(q.rows.slice(i, i + chunk))
          .onConflict((oc) => oc.columns(['session_id', 'occurrence_date']).doNothing())
          .execute();
      }
      // One statement per distinct (from, through): the indexer's batches share a few.
      const bySpan = new Map<string, { values: { indexed_through: string; indexed_from?: string | null }; ids: number[] }>();
      for (const [id, through] of q.through) {
        const values = q.from?.has(id) === true ? { indexed_through: through, indexed_from: q.from.get(id) ?? null } : { indexed_through: through };
        const key = JSON.stringify(values);
        const span = bySpan.get(key);
        if (span === undefined) bySpan.set(key, { values, ids: [id] });
        else span.ids.push(id);
      }
      for (const { values, ids } of bySpan.values()) {
        for (let i = 0; i < ids.length; i += storage.maxParameters - 2) {
          await db.updateTable('sessions').set(values).where('id', 'in', ids.slice(i, i + storage.maxParameters - 2)).execute();
        }
      }
    },

    /** Copies a session's changed visibility, org or type into its occurrences. */
    async copy(db: Db, q: { sessionId: number; values: Pick<OccurrenceRow, 'org_id' | 'is_public' | 'type'> }): Promise<void> {
      await db.updateTable('session_occurrences').set(q.values).where('session_id', '=', q.sessionId).execute();
    },

    /** Marks one occurrence, or (no date) every occurrence, of a session completed. */
    async complete(db: Db, q: { sessionId: number; date?: string }): Promise<void> {
      let update = db.updateTable('session_occurrences').set({ completed: 1 }).where('session_id', '=', q.sessionId);
      if (q.date !== undefined) update = update.where('occurrence_date', '=', q.date);
      await update.execute();
    },

    /** Moves one indexed occurrence to the instants and day its override gives it (none indexed: nothing). */
    async move(db: Db, q: { sessionId: number; date: string; values: Pick<OccurrenceRow, 'starts_at' | 'ends_at' | 'day'> }): Promise<void> {
      await db.updateTable('session_occurrences').set(q.values).where('session_id', '=', q.sessionId).where('occurrence_date', '=', q.date).execute();
    },

    /** Removes one occurrence (`date`), or every occurrence on or after `from`. */
    async remove(db: Db, q: { sessionId: number; date: string } | { sessionId: number; from: string }): Promise<void> {
      const base = db.deleteFrom('session_occurrences').where('session_id', '=', q.sessionId);
      await ('date' in q ? base.where('occurrence_date', '=', q.date) : base.where('occurrence_date', '>=', q.from)).execute();
    },
  };
}
