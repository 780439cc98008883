import { type Expression, type ExpressionBuilder, type SelectQueryBuilder, type SqlBool, expressionBuilder, sql } from 'kysely';
import type { Db, Storage } from '../../storage/database.js';
import { prepared } from '../../storage/prepared.js';
import type { Database, SessionRow } from '../../storage/tables.js';
import { FILTER_PARAMS, READER_PARAMS, type Reader, type StatementFilters, streamsAsOne, streamsFor } from './sessions.listing-filters.js';
import { RECURRENCE_COLUMNS } from './sessions.model.js';
import { ONE_OFF } from './sessions.occurrences.js';
import { joinedCount } from './sessions.participants-repository.js';
import { tiedToInSql, visibleTo } from './sessions.visibility.js';

export type SessionWithCreator = SessionRow & { creator_handle: string };

/** A place in an undated listing: a session (a series once), ordered by (starts_at, id). */
export type PageKey = { startsAt: string; id: number };

type Sessions = ExpressionBuilder<Database, 'sessions'>;
type SessionQuery = SelectQueryBuilder<Database, 'sessions', SessionWithCreator>;

/**
 * Sessions with their creator's handle, looked up per row: as a join, PostgreSQL hashed the
 * whole users table for a page of sessions (docs/performance.md).
 */
export function baseQuery(db: Db): SessionQuery {
  return db
    .selectFrom('sessions')
    .selectAll('sessions')
    .select((eb) => eb.selectFrom('users').select('users.handle').whereRef('users.id', '=', 'sessions.created_by').as('creator_handle'))
    // created_by is a foreign key to users, so there is always a handle.
    .$narrowType<{ creator_handle: string }>();
}

/** baseQuery with the collaborators' handles: one comma-separated list per row (collaboratorsOf), each handle looked up by key. */
export function listedQuery(storage: Storage, db: Db) {
  return baseQuery(db).select((eb) =>
    eb
      .selectFrom('session_collaborators as sc')
      .select((e) => storage.commaList(e.selectFrom('users').select('users.handle').whereRef('users.id', '=', 'sc.user_id').$asScalar().$notNull()).as('list'))
      .whereRef('sc.session_id', '=', 'sessions.id')
      .as('collaborator_list'),
  );
}

export interface KeysQuery {
  user: Reader;
  filters: StatementFilters;
  after: PageKey | undefined;
  limit: number;
  /** Read each series key's first three indexed dates from this date (nextThreeList). */
  nextFrom?: string;
}
/** Where the occurrence index stops short of a range: beyond a session's indexed_through, or before its indexed_from. */
export type UnindexedSide = 'ahead' | 'before';
export interface UnindexedQuery {
  user: Reader;
  filters: StatementFilters;
  from: string;
  to: string;
  side: UnindexedSide;
}
export interface ByIdsQuery {
  ids: readonly number[];
  listing?: { user: Reader; filters: StatementFilters };
}

/** The filters every listing applies to a session row, visibility aside. */
function filtersOf(storage: Storage, user: Reader, f: StatementFilters) {
  return (eb: Sessions): Expression<SqlBool> => {
    const terms: Expression<SqlBool>[] = [columnFiltersOf(storage, 'sessions', f)];
    if (f.channel !== undefined) terms.push(eb('sessions.is_public', '=', f.channel === 'public' ? 1 : 0));
    if (f.source === 'user') terms.push(tiedToInSql(user)(eb));
    return eb.and(terms);
  };
}

/** A session row, or a reader's access row holding copies of its columns (migration 0029): both name them alike. */
type FilteredTable = 'sessions' | 'session_access';
const SESSION_ID_OF = { sessions: 'id', session_access: 'session_id' } as const;

/** The filters of a session's own columns (type, completion, named, keyword), tested on `table`'s. */
export function columnFiltersOf(storage: Storage, table: FilteredTable, f: Pick<StatementFilters, 'type' | 'completed' | 'named' | 'folded'>): Expression<SqlBool> {
  const eb = expressionBuilder<Database, FilteredTable>();
  const column = (name: 'type' | 'status' | 'search_name') => sql.ref<string>(`${table}.${name}`);
  const terms: Expression<SqlBool>[] = [];
  if (f.type !== undefined) terms.push(eb(column('type'), '=', f.type));
  // A literal, so that a prepared statement matches sessions_public_completed_idx (migration 0032).
  if (f.completed !== undefined) terms.push(eb(column('status'), f.completed === 1 ? '=' : '<>', sql.lit('completed')));
  if (f.named !== undefined) terms.push(f.named.length === 0 ? sql<SqlBool>`1 = 0` : eb(sql.ref<number>(`${table}.${SESSION_ID_OF[table]}`), 'in', [...f.named]));
  else if (f.folded !== undefined) terms.push(storage.foldedContains(column('search_name'), f.folded));
  return eb.and(terms);
}

/**
 * Sessions the occurrence index stops short of `to`: never indexed, or indexed through an
 * earlier day. Two parts, each one index's shape: mayBeUnindexedAhead probes them apart.
 */
export function indexedShortOf(to: string) {
  const eb = expressionBuilder<Database, 'sessions'>();
  return {
    never: eb('sessions.indexed_through', 'is', null),
    /** `through` (a session's indexed_through, or the least of an org's) is before `to`. */
    before: (through: Expression<string | null>) => eb(through, '<', to),
  };
}

/**
 * A series' first three indexed dates from `from`, as one list of `date|starts_at|ends_at|joined`
 * (nextListOf reads it back), the instants as an override set them: one seek per series.
 */
export function nextThreeList(storage: Storage, sessionId: Expression<number>, createdBy: Expression<number>, from: string) {
  const eb = expressionBuilder<Database, never>();
  const firstThree = eb
    .selectFrom('session_occurrences')
    .select(
      sql<string>`session_occurrences.occurrence_date || '|' || session_occurrences.starts_at || '|' || session_occurrences.ends_at || '|' || ${joinedCount(sql.ref('session_occurrences.session_id'), sql.ref('session_occurrences.occurrence_date'), createdBy)}`.as('next'),
    )
    .where(sql.ref('session_occurrences.session_id'), '=', sessionId)
    .where('session_occurrences.occurrence_date', '>=', from)
    .orderBy('session_occurrences.occurrence_date')
    .limit(3)
    .as('n');
  return eb.selectFrom(firstThree).select((e) => storage.commaList(e.ref('n.next')).as('list'));
}

/** Visible to the user and matching the filters: what a listing may show. */
function listable(storage: Storage, user: Reader, f: StatementFilters) {
  const visible = visibleTo({ ...user, orgIds: [...f.orgIds] });
  const filters = filtersOf(storage, user, f);
  return (eb: Sessions) => eb.and([visible(eb), filters(eb)]);
}

/** The prepared statements of the sessions repository's listing reads (storage/prepared.ts). Built once per storage. */
export function sessionStatements(storage: Storage) {
  return { ...keyStatements(storage), ...rowStatements(storage) };
}

/** A page's keys, and the sessions a dated page must expand. */
function keyStatements(storage: Storage) {
  /** What each stream hands on of a session: its key, and what the page reads beside it (keysQuery). */
  const KEY_COLUMNS = ['sessions.id', 'sessions.starts_at', 'sessions.row_version', 'sessions.is_recurring', 'sessions.created_by'] as const;

  function publicStream(db: Db, orgId: number, q: KeysQuery) {
    // The channel a literal too: with `completed=1` or `type` the stream walks a partial index (0032).
    let query = db.selectFrom('sessions').select(KEY_COLUMNS).where('sessions.org_id', '=', orgId).where('sessions.is_public', '=', sql.lit(1)).where(filtersOf(storage, q.user, q.filters));
    const { after } = q;
    if (after !== undefined) query = query.where((eb) => eb(eb.refTuple('sessions.starts_at', 'sessions.id'), '>', eb.tuple(after.startsAt, after.id)));
    return query;
  }

  /** The reader's personal sessions, in listing order from session_access's index, each joined to its row (filters, KEY_COLUMNS). */
  function personalStream(db: Db, q: KeysQuery, isPublic: 0 | 1 | undefined) {
    const f = q.filters;
    let query = db
      .selectFrom('session_access')
      .innerJoin('sessions', 'sessions.id', 'session_access.session_id')
      // The key from session_access: its index's order is the stream's, so the merge stops it at the page.
      // `as starts_at`: alone, the stream is ordered by that name, which both tables have (SQLite: ambiguous).
      .select(['session_access.session_id as id', 'session_access.starts_at as starts_at', 'sessions.row_version', 'sessions.is_recurring', 'sessions.created_by'])
      .where('session_access.user_id', '=', q.user.id)
      .where('session_access.org_id', 'in', [...f.orgIds]);
    // The channel is the access row's flag; the other filters its copies of the session's columns (on index entries).
    if (isPublic !== undefined) query = query.where('session_access.is_public', '=', isPublic);
    query = query.where(columnFiltersOf(storage, 'session_access', f));
    const { after } = q;
    if (after !== undefined) query = query.where((eb) => eb(eb.refTuple('session_access.starts_at', 'session_access.session_id'), '>', eb.tuple(after.startsAt, after.id)));
    return query;
  }

  /**
   * The statement of an undated page's keys: see keys(). Each key comes with what the page
   * needs of its row beside it, read in the same snapshot the streams decided visibility in:
   * the row's version (kept rows) and, for a one-off session, its participants; with `nextFrom`,
   * a series' next dates, so that a page of kept rows needs no other statement.
   */
  const keysQuery = prepared([...READER_PARAMS, ...FILTER_PARAMS, 'after.startsAt', 'after.id', 'limit', 'nextFrom'], (db, q: KeysQuery) => {
    const streams = streamsFor(q.filters);
    const reads = [];
    if (streams.public) for (const orgId of q.filters.orgIds) reads.push(publicStream(db, orgId, q));
    if (streams.personal) reads.push(personalStream(db, q, streams.personalPublic));
    // streamsFor always picks a stream: the personal one whenever the public ones are not read.
    type Key = Pick<SessionRow, 'id' | 'starts_at' | 'row_version' | 'is_recurring' | 'created_by'>;
    const page = streamsAsOne(storage, db, reads, ['starts_at', 'id'], q.limit) as NonNullable<ReturnType<typeof streamsAsOne<Key>>>;
    return db
      .selectFrom(page.as('k'))
      .select((eb) => [
        'k.id',
        'k.starts_at',
        'k.row_version',
        // Counted for the page's keys only; a series counts its next occurrence's participants, read with its next dates.
        eb.case().when('k.is_recurring', '=', 0).then(joinedCount(eb.ref('k.id'), sql.lit(ONE_OFF), eb.ref('k.created_by'))).end().as('joined'),
        q.nextFrom === undefined
          ? sql<string | null>`null`.as('next')
          : eb.case().when('k.is_recurring', '=', 1).then(nextThreeList(storage, eb.ref('k.id'), eb.ref('k.created_by'), q.nextFrom)).end().as('next'),
      ])
      .orderBy('k.starts_at')
      .orderBy('k.id');
  }, { named: true });

  /** The statement of unindexedInRange. */
  const unindexedQuery = prepared([...READER_PARAMS, ...FILTER_PARAMS, 'from', 'to'], (db, q: UnindexedQuery) => {
    const f = { ...q.filters, completed: undefined };
    return db
      .selectFrom('sessions')
      .select([...RECURRENCE_COLUMNS.map((c) => `sessions.${c}` as const), 'sessions.indexed_through', 'sessions.indexed_from'])
      .where((eb) => {
        if (q.side === 'before') return eb('sessions.indexed_from', '>', q.from);
        const short = indexedShortOf(q.to);
        return eb.or([short.never, short.before(eb.ref('sessions.indexed_through'))]);
      })
      .where((eb) => eb('sessions.org_id', 'in', [...f.orgIds]))
      .where(listable(storage, q.user, f))
      .where((eb) =>
        eb.or([
          eb.and([eb('sessions.is_recurring', '=', 0), eb('sessions.schedule', '>=', q.from), eb('sessions.schedule', '<=', q.to)]),
          eb.and([
            eb('sessions.is_recurring', '=', 1),
            eb(eb.fn.coalesce('sessions.recurring_start', 'sessions.schedule'), '<=', q.to),
            eb.or([eb('sessions.recurring_ends', 'is', null), eb('sessions.recurring_ends', '>=', q.from)]),
          ]),
        ]),
      )
      .orderBy('sessions.id');
  }, { named: true });

  return { keysQuery, unindexedQuery };
}

/** Rows by id: whole (with their collaborators), or their versions only. */
function rowStatements(storage: Storage) {
  /** The statement of byIds: `ids` distinct and at least one. */
  const byIdsQuery = prepared(['ids', ...READER_PARAMS.map((p) => `listing.${p}` as const), ...FILTER_PARAMS.map((p) => `listing.${p}` as const)], (db, q: ByIdsQuery) => {
    const query = listedQuery(storage, db)
      .where((eb) => storage.idIn(eb.ref('sessions.id'), q.ids));
    return q.listing === undefined ? query : query.where(listable(storage, q.listing.user, { ...q.listing.filters, completed: undefined }));
  }, { named: true });

  /** The statement of a listing's row versions (byIds' kept rows): `ids` distinct and at least one. */
  const versionsQuery = prepared(
    ['ids', ...READER_PARAMS.map((p) => `listing.${p}` as const), ...FILTER_PARAMS.map((p) => `listing.${p}` as const)],
    (db, q: Required<ByIdsQuery>) =>
      db
        .selectFrom('sessions')
        .select(['sessions.id', 'sessions.row_version'])
        .where((eb) => storage.idIn(eb.ref('sessions.id'), q.ids))
        .where(listable(storage, q.listing.user, { ...q.listing.filters, completed: undefined })),
    { named: true },
  );

  return { byIdsQuery, versionsQuery };
}
