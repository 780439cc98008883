import { type Expression, type ExpressionBuilder, type SelectQueryBuilder, type SqlBool, sql } from 'kysely';
import type { Db, Storage } from '../../storage/database.js';
import { prepared } from '../../storage/prepared.js';
import type { Database, SessionRow } from '../../storage/tables.js';
import { FILTER_PARAMS, READER_PARAMS, type Reader, type StatementFilters, involvedIds, streamsAsOne, streamsFor } from './sessions.listing-filters.js';
import { RECURRENCE_COLUMNS } from './sessions.model.js';
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

export interface KeysQuery {
  user: Reader;
  filters: StatementFilters;
  after: PageKey | undefined;
  limit: number;
}
export interface UnindexedQuery {
  user: Reader;
  filters: StatementFilters;
  from: string;
  to: string;
  side: 'ahead' | 'before';
}
export interface ByIdsQuery {
  ids: readonly number[];
  listing?: { user: Reader; filters: StatementFilters };
}

/** The prepared statements of the sessions repository's listing reads (storage/prepared.ts). Built once per storage. */
export function sessionStatements(storage: Storage) {
  /** The filters every listing applies to a session row, visibility aside. */
  function filtersOf(user: Reader, f: StatementFilters) {
    return (eb: Sessions): Expression<SqlBool> => {
      const terms: Expression<SqlBool>[] = [];
      if (f.channel !== undefined) terms.push(eb('sessions.is_public', '=', f.channel === 'public' ? 1 : 0));
      if (f.type !== undefined) terms.push(eb('sessions.type', '=', f.type));
      if (f.completed !== undefined) terms.push(eb('sessions.status', f.completed === 1 ? '=' : '<>', 'completed'));
      if (f.source === 'user') terms.push(tiedToInSql(user)(eb));
      if (f.named !== undefined) terms.push(f.named.length === 0 ? sql<SqlBool>`1 = 0` : eb('sessions.id', 'in', [...f.named]));
      else if (f.folded !== undefined) terms.push(storage.foldedContains(eb.ref('sessions.search_name'), f.folded));
      return eb.and(terms);
    };
  }

  /** Visible to the user and matching the filters: what a listing may show. */
  function listable(user: Reader, f: StatementFilters) {
    const visible = visibleTo({ ...user, orgIds: [...f.orgIds] });
    const filters = filtersOf(user, f);
    return (eb: Sessions) => eb.and([visible(eb), filters(eb)]);
  }

  function keyStream(db: Db, where: (eb: Sessions) => Expression<SqlBool>, q: KeysQuery) {
    let query = db.selectFrom('sessions').select(['sessions.id', 'sessions.starts_at']).where(where).where(filtersOf(q.user, q.filters));
    const { after } = q;
    if (after !== undefined) query = query.where((eb) => eb(eb.refTuple('sessions.starts_at', 'sessions.id'), '>', eb.tuple(after.startsAt, after.id)));
    return query.orderBy('sessions.starts_at').orderBy('sessions.id').limit(q.limit);
  }

  /** The statement of an undated page's keys: see keys(). */
  const keysQuery = prepared([...READER_PARAMS, ...FILTER_PARAMS, 'after.startsAt', 'after.id', 'limit'], (db, q: KeysQuery) => {
    const { user, filters: f } = q;
    const streams = streamsFor(f);
    const orgs = [...f.orgIds];
    const reads = [];
    if (streams.public) {
      for (const orgId of orgs) reads.push(keyStream(db, (eb) => eb.and([eb('sessions.org_id', '=', orgId), eb('sessions.is_public', '=', 1)]), q));
    }
    if (streams.own) {
      // One stream per org too: within one (creator, org) the index is in listing order.
      for (const orgId of orgs) reads.push(keyStream(db, (eb) => eb.and([eb('sessions.created_by', '=', user.id), eb('sessions.org_id', '=', orgId)]), q));
    }
    if (streams.involved) {
      reads.push(keyStream(db, (eb) => eb.and([eb('sessions.id', 'in', involvedIds(db, user)), eb('sessions.org_id', 'in', orgs)]), q));
    }
    // streamsFor always picks a stream: the own ones whenever the public ones are not read.
    return streamsAsOne(db, reads, ['starts_at', 'id'], q.limit) as NonNullable<ReturnType<typeof streamsAsOne<{ id: number; starts_at: string }>>>;
  });

  /** The statement of unindexedInRange. */
  const unindexedQuery = prepared([...READER_PARAMS, ...FILTER_PARAMS, 'from', 'to'], (db, q: UnindexedQuery) => {
    const f = { ...q.filters, completed: undefined };
    return db
      .selectFrom('sessions')
      .select([...RECURRENCE_COLUMNS.map((c) => `sessions.${c}` as const), 'sessions.indexed_through', 'sessions.indexed_from'])
      .where((eb) =>
        q.side === 'ahead'
          ? eb.or([eb('sessions.indexed_through', 'is', null), eb('sessions.indexed_through', '<', q.to)])
          : eb('sessions.indexed_from', '>', q.from),
      )
      .where((eb) => eb('sessions.org_id', 'in', [...f.orgIds]))
      .where(listable(q.user, f))
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
  });

  /** The statement of byIds: `ids` distinct and at least one. */
  const byIdsQuery = prepared(['ids', ...READER_PARAMS.map((p) => `listing.${p}` as const), ...FILTER_PARAMS.map((p) => `listing.${p}` as const)], (db, q: ByIdsQuery) => {
    const query = baseQuery(db).where((eb) => storage.idIn(eb.ref('sessions.id'), q.ids));
    return q.listing === undefined ? query : query.where(listable(q.listing.user, { ...q.listing.filters, completed: undefined }));
  });

  /** The statement of collaboratorHandles: `ids` distinct and at least one. */
  const collaboratorsQuery = prepared(['ids'], (db, q: { ids: readonly number[] }) =>
    db
      .selectFrom('session_collaborators as sc')
      .select(['sc.session_id', (eb) => eb.selectFrom('users').select('users.handle').whereRef('users.id', '=', 'sc.user_id').as('handle')])
      .where('sc.session_id', 'in', q.ids)
      .$narrowType<{ handle: string }>()
      .orderBy('handle'),
  );

  return { keysQuery, unindexedQuery, byIdsQuery, collaboratorsQuery };
}
