import { type Expression, type ExpressionBuilder, type SqlBool, expressionBuilder, sql } from 'kysely';
import type { Db, Storage } from '../../storage/database.js';
import { prepared } from '../../storage/prepared.js';
import type { Database, OccurrenceRow } from '../../storage/tables.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { FILTER_PARAMS, READER_PARAMS, type Reader, type SessionFilters, type StatementFilters, type Streams, streamsAsOne, streamsFor } from './sessions.listing-filters.js';
import { ONE_OFF } from './sessions.occurrences.js';
import { joinedCount } from './sessions.participants-repository.js';
import { columnFiltersOf, indexedShortOf, nextThreeList } from './sessions.statements.js';

type Occ = ExpressionBuilder<Database, 'session_occurrences'>;

/**
 * Occurrences taking place on a day in [from, to] (`to` undefined: open): their `day`, which an
 * override may have moved from their occurrence_date. A read by session seeks
 * session_occurrences_day_idx (session_id, day), as it sought the primary key's occurrence_date before.
 */
export function dayWithin(eb: Occ, from: string, to?: string): Expression<SqlBool> {
  return eb.and([eb('session_occurrences.day', '>=', from), ...(to === undefined ? [] : [eb('session_occurrences.day', '<=', to)])]);
}

type OccurrenceKeyRow = Pick<OccurrenceRow, 'session_id' | 'occurrence_date' | 'starts_at' | 'ends_at' | 'completed'>;

/** A place in a dated listing: one occurrence, ordered by (starts_at, session id, date). */
export interface DatedPlace {
  startsAt: string;
  id: number;
  date: string;
}

/** One dated page after the cursor: what the index's page statement is asked. */
export interface DatedPageQuery {
  user: AuthenticatedUser;
  filters: SessionFilters;
  from: string;
  to: string;
  after: DatedPlace | undefined;
  limit: number;
}

/** What the statement of a dated page is built from: the query, the reader narrowed, the instants computed. */
type PageStatement = Omit<DatedPageQuery, 'user' | 'filters'> & { user: Reader; filters: StatementFilters; lowest: string; highest: string };

/** Conditions every stream of a dated page shares: the range, the cursor and the occurrence's completion. */
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
    // A literal, so that the partial index of completed occurrences matches the query.
    if (f.completed === 1) terms.push(sql<SqlBool>`session_occurrences.completed = 1`);
    if (f.completed === 0) terms.push(sql<SqlBool>`session_occurrences.completed = 0`);
    return eb.and(terms);
  };
}

/**
 * The session's filters (type, named, keyword) on an org's public occurrences. Type and name
 * are the session's on every occurrence (no override sets them); the personal stream tests
 * them on its access rows' copies instead (columnFiltersOf).
 */
function sessionFilters(storage: Storage, f: StatementFilters) {
  return (eb: Occ): Expression<SqlBool> => {
    const terms: Expression<SqlBool>[] = [];
    if (f.type !== undefined) terms.push(eb('session_occurrences.type', '=', f.type));
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

/**
 * 1 when a session of the listing's orgs may be indexed not far enough for the range (its
 * indexed_through null or before `to`), whoever may see it: per org, a probe of the never-indexed
 * sessions' index (0030, mostly empty) and the first entry of sessions_unindexed_idx, each
 * with one plan for any range. Only then does the listing read which sessions those are
 * (unindexedInRange), so that mostly a page's keys are its only statement. Also 1 for a page without rows, which carries nothing.
 */
function mayBeUnindexedAhead(db: Db, q: PageStatement) {
  const eb = expressionBuilder<Database, never>();
  const short = indexedShortOf(q.to);
  const probes = [...q.filters.orgIds].flatMap((orgId) => {
    const ofOrg = db.selectFrom('sessions').where('sessions.org_id', '=', orgId);
    return [
      eb.exists(ofOrg.select(sql.lit(1).as('one')).where(short.never)),
      short.before(ofOrg.select('sessions.indexed_through').where('sessions.indexed_through', 'is not', null).orderBy('sessions.indexed_through').limit(1).$asScalar()),
    ];
  });
  return eb.case().when(eb.or(probes)).then(1).else(0).end();
}

/** One stream of a dated page: its occurrences, which streamsAsOne reads in listing order up to the page. */
function stream(db: Db, where: (eb: Occ) => Expression<SqlBool>, q: PageStatement) {
  return db
    .selectFrom('session_occurrences')
    .select(['session_occurrences.session_id', 'session_occurrences.occurrence_date', 'session_occurrences.starts_at', 'session_occurrences.ends_at', 'session_occurrences.completed'])
    .where(shared(q))
    .where(where);
}

/**
 * The reader's personal occurrences. Beside public streams (the usual listing) the personal
 * stream is private occurrences only: the reader's own are read in page order from an index of
 * private occurrences by creator (0031), and the sessions others created that the reader is tied
 * to are few: their occurrences are read by session (session_occurrences_day_idx), the sessions
 * handed over as one list. Otherwise every tied session is read that way.
 */
function personalStreams(storage: Storage, db: Db, q: PageStatement, flag: Streams['personalPublic']): ReturnType<typeof stream>[] {
  const { user, filters: f } = q;
  const own = flag === 0;
  // A session's starts_at is its first occurrence's: one that starts after the range has nothing in it, and its occurrences are not probed.
  // Type and name are the session's on every occurrence (no override sets them): tested on the access rows' copies.
  let tied = db
    .selectFrom('session_access')
    .select('session_access.session_id')
    .where('session_access.user_id', '=', user.id)
    .where('session_access.org_id', 'in', [...f.orgIds])
    .where('session_access.starts_at', '<', q.highest)
    // A one-off takes place at its start: one that started before the range is not probed (a series' first start tells less).
    .where((eb) => eb.or([eb('session_access.is_recurring', '=', 1), eb('session_access.starts_at', '>=', q.lowest)]))
    .where(columnFiltersOf(storage, 'session_access', { type: f.type, named: f.named, folded: f.folded }));
  if (flag !== undefined) tied = tied.where('session_access.is_public', '=', flag);
  if (own) tied = tied.where('session_access.created_by', '<>', user.id);
  const bySession = stream(db, (eb) => eb.and([storage.inSubquery(eb.ref('session_occurrences.session_id'), tied.$asScalar()), ...(flag === undefined ? [] : [eb('session_occurrences.is_public', '=', flag)])]), q);
  if (!own) return [bySession];
  // A literal, so that the partial index of private occurrences matches the query.
  const ownPrivate = (eb: Occ) =>
    eb.and([eb('session_occurrences.created_by', '=', user.id), sql<SqlBool>`session_occurrences.is_public = 0`, eb('session_occurrences.org_id', 'in', [...f.orgIds]), sessionFilters(storage, f)(eb)]);
  return [stream(db, ownPrivate, q), bySession];
}

/** A dated page's keys: each stream's first `limit` occurrences, merged and cut at the page. */
function pageKeys(storage: Storage, db: Db, q: PageStatement) {
  const f = q.filters;
  const streams = streamsFor(f);
  const orgs = [...f.orgIds];
  const reads: ReturnType<typeof stream>[] = [];
  if (streams.public) {
    // A literal, so that the partial index of public occurrences matches the query.
    const ofOrg = (orgId: number) => (eb: Occ) => eb.and([eb('session_occurrences.org_id', '=', orgId), sql<SqlBool>`session_occurrences.is_public = 1`, sessionFilters(storage, f)(eb)]);
    for (const orgId of orgs) reads.push(stream(db, ofOrg(orgId), q));
  }
  if (streams.personal) reads.push(...personalStreams(storage, db, q, streams.personalPublic));
  // streamsFor always picks a stream: the personal one whenever the public ones are not read.
  return streamsAsOne(storage, db, reads, ['starts_at', 'session_id', 'occurrence_date'], q.limit) as NonNullable<ReturnType<typeof streamsAsOne<OccurrenceKeyRow>>>;
}

/** The statement of page(): its keys, each with what the page reads beside it. */
function datedPageQuery(storage: Storage) {
  return prepared(
    [...READER_PARAMS, ...FILTER_PARAMS, 'from', 'to', 'lowest', 'highest', 'after.startsAt', 'after.id', 'after.date', 'limit'],
    (db, q: PageStatement) => {
      const page = pageKeys(storage, db, q);
      // Each key with its row's version and its occurrence's participants (a one-off's under ONE_OFF), as of the streams' snapshot.
      // Participants are counted, and an override looked up, only for a session flagged as having any (migration 0033).
      return db
        .selectFrom(page.as('k'))
        .innerJoin('sessions', 'sessions.id', 'k.session_id')
        .select((eb) => [
          mayBeUnindexedAhead(db, q).as('unindexed_ahead'),
          'k.session_id',
          'k.occurrence_date',
          'k.starts_at',
          'k.ends_at',
          'k.completed',
          'sessions.row_version',
          eb
            .case()
            .when('sessions.has_participants', '=', 1)
            .then(joinedCount(eb.ref('k.session_id'), eb.case().when('sessions.is_recurring', '=', 1).then(eb.ref('k.occurrence_date')).else(sql.lit(ONE_OFF)).end(), eb.ref('sessions.created_by')))
            .else(0)
            .end()
            .as('joined'),
          // A series' occurrence as an override edited it (a one-off has none): read here, so that a page needs no statement of overrides.
          eb
            .case()
            .when(eb.and([eb('sessions.is_recurring', '=', 1), eb('sessions.has_overrides', '=', 1)]))
            .then(eb.selectFrom('session_overrides').select('session_overrides.fields').whereRef('session_overrides.session_id', '=', 'k.session_id').whereRef('session_overrides.occurrence_date', '=', 'k.occurrence_date'))
            .end()
            .as('override'),
        ])
        .orderBy('k.starts_at')
        .orderBy('k.session_id')
        .orderBy('k.occurrence_date');
    },
    { named: true },
  );
}

/** The statement of nextDates: `sessionIds` distinct and at least one. */
function nextDatesQuery(storage: Storage) {
  return prepared(['sessionIds', 'from'], (db, q: { sessionIds: readonly number[]; from: string }) =>
    db
      .selectFrom('sessions')
      .select((eb) => ['sessions.id', nextThreeList(storage, eb.ref('sessions.id'), eb.ref('sessions.created_by'), q.from).as('dates')])
      .where((eb) => storage.idIn(eb.ref('sessions.id'), q.sessionIds)), { named: true });
}

/** The statements of the occurrence index's reads (storage/prepared.ts): a dated page's keys, a series' next dates. */
export function indexStatements(storage: Storage) {
  return { pageQuery: datedPageQuery(storage), nextDatesQuery: nextDatesQuery(storage) };
}
