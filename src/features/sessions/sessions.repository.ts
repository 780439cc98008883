import { type Expression, type ExpressionBuilder, type SelectQueryBuilder, type SqlBool, sql } from 'kysely';
import type { Audience } from '../../storage/columns.js';
import type { Db, Storage } from '../../storage/database.js';
import { prepared } from '../../storage/prepared.js';
import type { Database, SessionRow } from '../../storage/tables.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { FILTER_PARAMS, READER_PARAMS, type Reader, type SessionFilters, type StatementFilters, involvedIds, readerOf, statementFilters, streamsAsOne, streamsFor } from './sessions.listing-filters.js';
import { RECURRENCE_COLUMNS, type RecurrenceRow } from './sessions.model.js';
import { sessionWrites } from './sessions.writes.js';
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
function baseQuery(db: Db): SessionQuery {
  return db
    .selectFrom('sessions')
    .selectAll('sessions')
    .select((eb) => eb.selectFrom('users').select('users.handle').whereRef('users.id', '=', 'sessions.created_by').as('creator_handle'))
    // created_by is a foreign key to users, so there is always a handle.
    .$narrowType<{ creator_handle: string }>();
}

/** A session not (entirely) in the occurrence index, with what expanding it needs. */
export type UnindexedSession = RecurrenceRow & { indexed_through: string | null; indexed_from: string | null };

export type SessionsRepository = ReturnType<typeof createSessionsRepository>;

interface KeysQuery {
  user: Reader;
  filters: StatementFilters;
  after: PageKey | undefined;
  limit: number;
}
interface UnindexedQuery {
  user: Reader;
  filters: StatementFilters;
  from: string;
  to: string;
  side: 'ahead' | 'before';
}
interface ByIdsQuery {
  ids: readonly number[];
  listing?: { user: Reader; filters: StatementFilters };
}

/** Session rows, their collaborators and removed occurrences. Built once per storage. */
export function createSessionsRepository(storage: Storage) {
  /** The filters every listing applies to a session row, visibility aside. */
  function filtersOf(user: Reader, f: StatementFilters) {
    return (eb: Sessions): Expression<SqlBool> => {
      const terms: Expression<SqlBool>[] = [];
      if (f.channel !== undefined) terms.push(eb('sessions.is_public', '=', f.channel === 'public' ? 1 : 0));
      if (f.type !== undefined) terms.push(eb('sessions.type', '=', f.type));
      if (f.completed !== undefined) terms.push(eb('sessions.status', f.completed === 1 ? '=' : '<>', 'completed'));
      if (f.source === 'user') terms.push(tiedToInSql(user)(eb));
      if (f.named !== undefined) terms.push(f.named.length === 0 ? sql<SqlBool>`1 = 0` : eb('sessions.id', 'in', [...f.named]));
      else if (f.folded !== undefined) terms.push(storage.nameContains(eb.ref('sessions.search_name'), f.folded));
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
  const byIdsQuery = prepared(['ids', ...READER_PARAMS.map((p) => `listing.${p}`), ...FILTER_PARAMS.map((p) => `listing.${p}`)], (db, q: ByIdsQuery) => {
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

  return {
    /**
     * The keys of one undated page after the cursor: the first `limit` of each visibility
     * stream (an org's public sessions, the reader's own, the ones the reader is involved
     * in), merged; a session another member keeps private is in none of them.
     */
    async keys(q: { user: AuthenticatedUser; filters: SessionFilters; after: PageKey | undefined; limit: number }): Promise<PageKey[]> {
      const rows = await keysQuery.execute(storage.db, { ...q, user: readerOf(q.user), filters: statementFilters(q.filters) });
      return rows.map((r) => ({ startsAt: r.starts_at, id: r.id }));
    },

    /**
     * Visible sessions matching the filters that may occur in [from, to] but are not in the
     * occurrence index through `to` (side 'ahead'): stored before the index existed, or series
     * whose occurrences that far ahead are expanded per request; or not from `from` on
     * (side 'before'): series the index holds only from a later indexed_from. Completion is per occurrence,
     * so the caller applies that filter.
     */
    unindexedInRange(q: { user: AuthenticatedUser; filters: SessionFilters; from: string; to: string; side: 'ahead' | 'before' }): Promise<UnindexedSession[]> {
      return unindexedQuery.execute(storage.db, { ...q, user: readerOf(q.user), filters: statementFilters(q.filters) });
    },

    /**
     * The sessions among `ids` with their creator, by id. With `listing`, only those still
     * visible and matching its filters: a session may change between finding a page and
     * reading it, and one made private meanwhile is never shown.
     */
    async byIds(db: Db, q: { ids: readonly number[]; listing?: { user: AuthenticatedUser; filters: SessionFilters } }): Promise<Map<number, SessionWithCreator>> {
      if (q.ids.length === 0) return new Map();
      const { listing } = q;
      const rows = await byIdsQuery.execute(db, { ids: [...new Set(q.ids)], ...(listing === undefined ? {} : { listing: { user: readerOf(listing.user), filters: statementFilters(listing.filters) } }) });
      return new Map(rows.map((r) => [r.id, r]));
    },

    async findVisible(db: Db, q: { user: AuthenticatedUser; id: number }): Promise<SessionWithCreator | undefined> {
      return baseQuery(db).where('sessions.id', '=', q.id).where(visibleTo(q.user)).executeTakeFirst();
    },

    /**
     * The session visible to the user, locked against concurrent writers until the
     * transaction ends (PostgreSQL `FOR UPDATE`; SQLite's write transactions hold the whole
     * database already), so a write merges into the row as it is when it commits.
     */
    async lockVisible(db: Db, q: { user: AuthenticatedUser; id: number }): Promise<SessionWithCreator | undefined> {
      return storage.forUpdate(baseQuery(db).where('sessions.id', '=', q.id).where(visibleTo(q.user))).executeTakeFirst();
    },

    /** The session whatever its visibility: only for re-reading one the caller has already been allowed to see. */
    async find(db: Db, id: number): Promise<SessionWithCreator | undefined> {
      return baseQuery(db).where('sessions.id', '=', id).executeTakeFirst();
    },

    /** Collaborators' handles per session, in handle order; each handle is looked up by primary key (see baseQuery). */
    async collaboratorHandles(db: Db, sessionIds: readonly number[]): Promise<Map<number, string[]>> {
      const out = new Map<number, string[]>();
      if (sessionIds.length === 0) return out;
      const rows = await collaboratorsQuery.execute(db, { ids: [...new Set(sessionIds)] });
      for (const r of rows) out.set(r.session_id, [...(out.get(r.session_id) ?? []), r.handle]);
      return out;
    },

    /** Users among `handles` who belong to `orgId`, by handle. */
    async membersByHandle(db: Db, q: { orgId: number; handles: readonly string[] }): Promise<Map<string, number>> {
      if (q.handles.length === 0) return new Map();
      const rows = await db
        .selectFrom('users')
        .innerJoin('memberships', 'memberships.user_id', 'users.id')
        .select(['users.id', 'users.handle'])
        .where('memberships.org_id', '=', q.orgId)
        .where('users.handle', 'in', q.handles)
        .execute();
      return new Map(rows.map((r) => [r.handle, r.id]));
    },

    async exceptionsOf(db: Db, sessionIds: readonly number[]): Promise<Map<number, Set<string>>> {
      const out = new Map<number, Set<string>>();
      if (sessionIds.length === 0) return out;
      const rows = await db
        .selectFrom('session_exceptions')
        .select(['session_id', 'occurrence_date'])
        .where('session_id', 'in', [...new Set(sessionIds)])
        .execute();
      for (const r of rows) {
        const set = out.get(r.session_id) ?? new Set<string>();
        set.add(r.occurrence_date);
        out.set(r.session_id, set);
      }
      return out;
    },

    ...sessionWrites,

    /** Which of `ids` exist, whoever may see them. */
    async existing(db: Db, ids: readonly number[]): Promise<Set<number>> {
      if (ids.length === 0) return new Set();
      return new Set((await db.selectFrom('sessions').select('id').where('id', 'in', [...new Set(ids)]).execute()).map((r) => r.id));
    },

    /**
     * Who can see the session as it is now (a change log entry keeps it, so that a reader
     * who loses sight of the session is told it is gone): every org member when it is
     * public, else its creator, collaborators and participants.
     */
    async audienceOf(db: Db, row: Pick<SessionRow, 'id' | 'is_public' | 'created_by'>): Promise<Audience> {
      if (row.is_public === 1) return { public: true, users: [] };
      const rows = await db
        .selectFrom('session_collaborators')
        .select('user_id')
        .where('session_id', '=', row.id)
        .union(db.selectFrom('session_participants').select('user_id').where('session_id', '=', row.id))
        .execute();
      return { public: false, users: [...new Set([row.created_by, ...rows.map((r) => r.user_id)])].sort((a, b) => a - b) };
    },

    /** Sessions whose occurrence index must be built or extended to reach `before`, oldest need first. */
    dueForIndexing(db: Db, q: { before: string; limit: number }) {
      return db
        .selectFrom('sessions')
        .select([...RECURRENCE_COLUMNS, 'org_id', 'created_by', 'is_public', 'type', 'indexed_through'])
        .where((eb) => eb.or([eb('indexed_through', 'is', null), eb('indexed_through', '<', q.before)]))
        .orderBy('id')
        .limit(q.limit)
        .execute();
    },
  };
}
