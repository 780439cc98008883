import { type ExpressionBuilder, type SqlBool, type Expression, sql } from 'kysely';
import type { Db, Storage } from '../../storage/database.js';
import { prepared } from '../../storage/prepared.js';
import type { Database, OccurrenceRow } from '../../storage/tables.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { addDays } from '../recurrence/recurrence.dates.js';
import { FILTER_PARAMS, READER_PARAMS, type Reader, type SessionFilters, type StatementFilters, readerOf, statementFilters, streamsAsOne, streamsFor } from './sessions.listing-filters.js';

/** A place in a dated listing: one occurrence, ordered by (starts_at, session id, date). */
export interface DatedKey {
  startsAt: string;
  id: number;
  date: string;
  endsAt: string;
  completed: boolean;
}

export const datedBefore = (a: Pick<DatedKey, 'startsAt' | 'id' | 'date'>, b: Pick<DatedKey, 'startsAt' | 'id' | 'date'>) =>
  a.startsAt < b.startsAt || (a.startsAt === b.startsAt && (a.id < b.id || (a.id === b.id && a.date < b.date)));

type Occ = ExpressionBuilder<Database, 'session_occurrences'>;

/**
 * Occurrences taking place on a day in [from, to] (`to` undefined: open): their `day`, which an
 * override may have moved from their occurrence_date. A read by session seeks
 * session_occurrences_day_idx (session_id, day), as it sought the primary key's occurrence_date before.
 */
export function dayWithin(eb: Occ, from: string, to?: string): Expression<SqlBool> {
  return eb.and([eb('session_occurrences.day', '>=', from), ...(to === undefined ? [] : [eb('session_occurrences.day', '<=', to)])]);
}

/** An indexed occurrence's date and instants (an override's, when one moved it). */
export interface IndexedDate {
  date: string;
  starts_at: string;
  ends_at: string;
}

/** nextDates' `date|starts_at|ends_at` column read back (dates and ISO instants hold no `|`). */
function nextOf(column: string): IndexedDate {
  const [date, starts_at, ends_at] = column.split('|') as [string, string, string];
  return { date, starts_at, ends_at };
}

/** The last date a fully indexed session holds: nothing after it will ever be added. */
export const FULLY_INDEXED = '9999-12-31';

type OccurrenceKeyRow = Pick<OccurrenceRow, 'session_id' | 'occurrence_date' | 'starts_at' | 'ends_at' | 'completed'>;

export interface DatedPageQuery {
  user: AuthenticatedUser;
  filters: SessionFilters;
  from: string;
  to: string;
  after: Pick<DatedKey, 'startsAt' | 'id' | 'date'> | undefined;
  limit: number;
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

/** The statements of the index's reads (storage/prepared.ts). */
function indexStatements(storage: Storage) {
  /** What the statement of a dated page is built from: the query, the reader narrowed, the instants computed. */
  type PageStatement = Omit<DatedPageQuery, 'user' | 'filters'> & { user: Reader; filters: StatementFilters; lowest: string; highest: string };

  /** Conditions every stream of a dated page shares: the range, the cursor and the filters. */
  function shared(q: PageStatement) {
    const { filters: f, after } = q;
    return (eb: Occ): Expression<SqlBool> => {
      const terms: Expression<SqlBool>[] = [
        eb('session_occurrences.starts_at', '>=', q.lowest),
        eb('session_occurrences.starts_at', '<', q.highest),
        // The day it takes place on: an override may have moved it from its occurrence_date.
        dayWithin(eb, q.from, q.to),
      ];
      if (after !== undefined) {
        terms.push(eb(eb.refTuple('session_occurrences.starts_at', 'session_occurrences.session_id', 'session_occurrences.occurrence_date'), '>', eb.tuple(after.startsAt, after.id, after.date)));
      }
      if (f.type !== undefined) terms.push(eb('session_occurrences.type', '=', f.type));
      // A literal, so that the partial index of completed occurrences matches the query.
      if (f.completed === 1) terms.push(sql<SqlBool>`session_occurrences.completed = 1`);
      if (f.completed === 0) terms.push(sql<SqlBool>`session_occurrences.completed = 0`);
      if (f.named !== undefined) terms.push(f.named.length === 0 ? sql<SqlBool>`1 = 0` : eb('session_occurrences.session_id', 'in', [...f.named]));
      else if (f.folded !== undefined) {
        // The name of this row's session, tested here: a scalar subquery is looked up per row
        // the other conditions kept. As `exists` PostgreSQL joined it, testing the keyword on
        // every session of every org, so the time a search took told whether other tenants'
        // private sessions held the word (issue 34, M3).
        const name = eb.selectFrom('sessions as named').select('named.search_name').whereRef('named.id', '=', 'session_occurrences.session_id');
        terms.push(storage.foldedContains(name.$asScalar(), f.folded));
      }
      return eb.and(terms);
    };
  }

  function stream(db: Db, where: (eb: Occ) => Expression<SqlBool>, q: PageStatement) {
    return db
      .selectFrom('session_occurrences')
      .select(['session_occurrences.session_id', 'session_occurrences.occurrence_date', 'session_occurrences.starts_at', 'session_occurrences.ends_at', 'session_occurrences.completed'])
      .where(shared(q))
      .where(where)
      .orderBy('session_occurrences.starts_at')
      .orderBy('session_occurrences.session_id')
      .orderBy('session_occurrences.occurrence_date')
      .limit(q.limit);
  }

  /** The statement of page(). */
  const pageQuery = prepared(
    [...READER_PARAMS, ...FILTER_PARAMS, 'from', 'to', 'lowest', 'highest', 'after.startsAt', 'after.id', 'after.date', 'limit'],
    (db, q: PageStatement) => {
      const { user, filters: f } = q;
      const streams = streamsFor(f);
      const orgs = [...f.orgIds];
      const reads: ReturnType<typeof stream>[] = [];
      if (streams.public) {
        // A literal, so that the partial index of public occurrences matches the query.
        for (const orgId of orgs) reads.push(stream(db, (eb) => eb.and([eb('session_occurrences.org_id', '=', orgId), sql<SqlBool>`session_occurrences.is_public = 1`]), q));
      }
      if (streams.personal) {
        // The reader's sessions are few next to an org's: their occurrences are read by session,
        // through the primary key. A session's starts_at is its first occurrence's: one that
        // starts after the range has nothing in it, and its occurrences are not probed.
        let personal = db.selectFrom('session_access as sa').select('sa.session_id').where('sa.user_id', '=', user.id).where('sa.org_id', 'in', orgs).where('sa.starts_at', '<', q.highest);
        if (streams.personalPublic !== undefined) personal = personal.where('sa.is_public', '=', streams.personalPublic);
        const flag = streams.personalPublic;
        reads.push(stream(db, (eb) => eb.and([eb('session_occurrences.session_id', 'in', personal), ...(flag === undefined ? [] : [eb('session_occurrences.is_public', '=', flag)])]), q));
      }
      // streamsFor always picks a stream: the personal one whenever the public ones are not read.
      return streamsAsOne(db, reads, ['starts_at', 'session_id', 'occurrence_date'], q.limit) as NonNullable<ReturnType<typeof streamsAsOne<OccurrenceKeyRow>>>;
    },
    { named: true },
  );

  /** The statement of nextDates: `sessionIds` distinct and at least one. */
  const nextDatesQuery = prepared(['sessionIds', 'from'], (db, q: { sessionIds: readonly number[]; from: string }) => {
    // The first three dates in one seek, as one list of `date|starts_at|ends_at` (nextOf reads each
    // back), the instants as an override set them: one probe per series instead of one per date.
    const firstThree = (eb: ExpressionBuilder<Database, 'sessions'>) =>
      eb
        .selectFrom('session_occurrences')
        .select(sql<string>`session_occurrences.occurrence_date || '|' || session_occurrences.starts_at || '|' || session_occurrences.ends_at`.as('next'))
        .whereRef('session_occurrences.session_id', '=', 'sessions.id')
        .where('session_occurrences.occurrence_date', '>=', q.from)
        .orderBy('session_occurrences.occurrence_date')
        .limit(3)
        .as('n');
    return db
      .selectFrom('sessions')
      .select((eb) => ['sessions.id', eb.selectFrom(firstThree(eb)).select((e) => storage.commaList(e.ref('n.next')).as('list')).as('dates')])
      .where((eb) => storage.idIn(eb.ref('sessions.id'), q.sessionIds));
  }, { named: true });

  return { pageQuery, nextDatesQuery };
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
    async page(q: DatedPageQuery): Promise<DatedKey[]> {
      const rows = await pageQuery.execute(storage.db, { ...q, user: readerOf(q.user), filters: statementFilters(q.filters), ...instantsOf(q) });
      return rows.map((r) => ({ startsAt: r.starts_at, id: r.session_id, date: r.occurrence_date, endsAt: r.ends_at, completed: r.completed === 1 }));
    },

    /**
     * The first three indexed occurrences (date and instants) on or after `from` of each session: from the
     * day before UTC's today, a daily series' third is the today of a zone a day ahead of
     * UTC. One seek into the primary key per series, stopping at three: numbering every indexed date ahead read
     * all of them (a daily series holds a year and more), 2.5 ms for 50 series.
     */
    async nextDates(db: Db, q: { sessionIds: readonly number[]; from: string }): Promise<Map<number, IndexedDate[]>> {
      const out = new Map<number, IndexedDate[]>();
      if (q.sessionIds.length === 0) return out;
      const rows = await nextDatesQuery.execute(db, { sessionIds: [...new Set(q.sessionIds)], from: q.from });
      for (const r of rows) {
        // The list's order is not the statement's to keep: sorted here (dates lead each entry).
        if (r.dates !== null) out.set(r.id, r.dates.split(',').sort().map(nextOf));
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
