import type { Expression, ExpressionBuilder, SelectQueryBuilder, SqlBool } from 'kysely';
import type { SessionType } from '../../storage/columns.js';
import type { Db, Storage } from '../../storage/database.js';
import type { Database, NewSession, SessionRow } from '../../storage/tables.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { RECURRENCE_COLUMNS, type RecurrenceRow } from './sessions.model.js';
import { involves, visibleTo } from './sessions.visibility.js';

export type SessionWithCreator = SessionRow & { creator_handle: string };

export interface SessionFilters {
  orgIds: readonly number[];
  channel?: 'public' | 'private';
  type?: SessionType;
  completed?: 0 | 1;
  source?: 'user' | 'organization';
  keyword?: string;
}

export type PageKey = { startsAt: string; id: number };

/** Listing order: instants are ISO strings of one fixed format, so they order as text. */
export const keyBefore = (a: PageKey, b: PageKey) => a.startsAt < b.startsAt || (a.startsAt === b.startsAt && a.id < b.id);
/** keyBefore as a sort comparator. */
export const compareKeys = (a: PageKey, b: PageKey) => (keyBefore(a, b) ? -1 : keyBefore(b, a) ? 1 : 0);

export const occurrenceKey = (sessionId: number, occurrenceDate: string) => `${sessionId}|${occurrenceDate}`;

type SessionQuery = SelectQueryBuilder<Database, 'sessions', SessionWithCreator>;
type Filter = (eb: ExpressionBuilder<Database, 'sessions'>) => Expression<SqlBool>;

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

/** A listing: who asks, what they filter on. */
export interface ListingQuery {
  user: AuthenticatedUser;
  filters: SessionFilters;
}

export type SessionsRepository = ReturnType<typeof createSessionsRepository>;

/** Session rows, their collaborators and removed occurrences. Built once per storage. */
export function createSessionsRepository(storage: Storage) {
  /** The listing filters (visibility first) as one condition over `sessions`. */
  function filtersOf({ user, filters: f }: ListingQuery): Filter {
    const visible = visibleTo({ ...user, orgIds: [...f.orgIds] });
    return (eb) => {
      const terms = [visible(eb)];
      if (f.channel !== undefined) terms.push(eb('sessions.is_public', '=', f.channel === 'public' ? 1 : 0));
      if (f.type !== undefined) terms.push(eb('sessions.type', '=', f.type));
      if (f.completed !== undefined) terms.push(eb('sessions.status', f.completed === 1 ? '=' : '<>', 'completed'));
      if (f.source === 'user') terms.push(eb.or([eb('sessions.created_by', '=', user.id), involves(eb, user.id)]));
      if (f.keyword !== undefined) terms.push(storage.containsInsensitive(eb.ref('sessions.name'), f.keyword));
      return eb.and(terms);
    };
  }

  /**
   * The keys of one page in listing order (starts_at, id) after the cursor, one org at a
   * time: within one org the `(org_id, starts_at, id, …)` index yields rows in listing order,
   * so each scan stops after `limit` matches, where `org_id in (…)` read and sorted every
   * session of every org. The rows are read afterwards, for the page only (byIds).
   */
  async function pageKeys(orgIds: readonly number[], filter: Filter, after: PageKey | undefined, limit: number): Promise<PageKey[]> {
    const perOrg = await Promise.all(
      orgIds.map((orgId) => {
        let q = storage.db.selectFrom('sessions').select(['sessions.id', 'sessions.starts_at']).where('sessions.org_id', '=', orgId).where(filter);
        if (after !== undefined) q = q.where((eb) => eb(eb.refTuple('sessions.starts_at', 'sessions.id'), '>', eb.tuple(after.startsAt, after.id)));
        return q.orderBy('sessions.starts_at').orderBy('sessions.id').limit(limit).execute();
      }),
    );
    const keys = perOrg.flat().map((r) => ({ startsAt: r.starts_at, id: r.id }));
    return keys.sort(compareKeys).slice(0, limit);
  }

  return {
    /**
     * The sessions among `ids` that are still visible and match the filters, by id. Applied
     * again because a session may change between finding a page and reading it: one made
     * private meanwhile is never shown.
     */
    async byIds(q: ListingQuery & { ids: readonly number[] }): Promise<Map<number, SessionWithCreator>> {
      if (q.ids.length === 0) return new Map();
      const rows = await baseQuery(storage.db).where('sessions.id', 'in', [...new Set(q.ids)]).where(filtersOf(q)).execute();
      return new Map(rows.map((r) => [r.id, r]));
    },

    async findVisible(db: Db, q: { user: AuthenticatedUser; id: number }): Promise<SessionWithCreator | undefined> {
      return baseQuery(db).where('sessions.id', '=', q.id).where(visibleTo(q.user)).executeTakeFirst();
    },

    /** The session whatever its visibility: only for re-reading one the caller has already been allowed to see. */
    async find(db: Db, id: number): Promise<SessionWithCreator | undefined> {
      return baseQuery(db).where('sessions.id', '=', id).executeTakeFirst();
    },

    /** Keys of the visible sessions (a series counts once) in listing order after the cursor. */
    keys(q: ListingQuery & { after: PageKey | undefined; limit: number }): Promise<PageKey[]> {
      return pageKeys(q.filters.orgIds, filtersOf(q), q.after, q.limit);
    },

    /** Keys of the one-off sessions whose local day is in [from, to], in listing order after the cursor. */
    oneOffKeysInRange(q: ListingQuery & { from: string; to: string; after: PageKey | undefined; limit: number }): Promise<PageKey[]> {
      const filters = filtersOf(q);
      const filter: Filter = (eb) =>
        eb.and([filters(eb), eb('sessions.is_recurring', '=', 0), eb('sessions.schedule', '>=', q.from), eb('sessions.schedule', '<=', q.to)]);
      return pageKeys(q.filters.orgIds, filter, q.after, q.limit);
    },

    /**
     * Series that may have an occurrence in [from, to]: only the columns their occurrences are
     * computed from, as a listing expands every one of them but shows only a page.
     */
    seriesOverlapping(q: ListingQuery & { from: string; to: string }): Promise<RecurrenceRow[]> {
      return storage.db
        .selectFrom('sessions')
        .select(RECURRENCE_COLUMNS.map((c) => `sessions.${c}` as const))
        .where(filtersOf(q))
        .where('sessions.is_recurring', '=', 1)
        .where((eb) => eb(eb.fn.coalesce('sessions.recurring_start', 'sessions.schedule'), '<=', q.to))
        .where((eb) => eb.or([eb('sessions.recurring_ends', 'is', null), eb('sessions.recurring_ends', '>=', q.from)]))
        .orderBy('sessions.id')
        .execute();
    },

    /** Collaborators' handles per session, in handle order; each handle is looked up by primary key (see baseQuery). */
    async collaboratorHandles(db: Db, sessionIds: readonly number[]): Promise<Map<number, string[]>> {
      const out = new Map<number, string[]>();
      if (sessionIds.length === 0) return out;
      const rows = await db
        .selectFrom('session_collaborators as sc')
        .select(['sc.session_id', (eb) => eb.selectFrom('users').select('users.handle').whereRef('users.id', '=', 'sc.user_id').as('handle')])
        .where('sc.session_id', 'in', [...new Set(sessionIds)])
        .$narrowType<{ handle: string }>()
        .orderBy('handle')
        .execute();
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

    async insert(db: Db, values: NewSession): Promise<number> {
      const row = await db.insertInto('sessions').values(values).returning('id').executeTakeFirstOrThrow();
      return row.id;
    },

    async update(db: Db, id: number, values: Partial<NewSession>): Promise<void> {
      await db.updateTable('sessions').set(values).where('id', '=', id).execute();
    },

    async replaceCollaborators(db: Db, q: { sessionId: number; userIds: readonly number[] }): Promise<void> {
      await db.deleteFrom('session_collaborators').where('session_id', '=', q.sessionId).execute();
      if (q.userIds.length > 0) {
        await db
          .insertInto('session_collaborators')
          .values(q.userIds.map((user_id) => ({ session_id: q.sessionId, user_id })))
          .execute();
      }
    },

    async delete(db: Db, id: number): Promise<void> {
      await db.deleteFrom('sessions').where('id', '=', id).execute();
    },

    /** Removes one occurrence of a series, and the participation in it. */
    async addException(db: Db, q: { sessionId: number; date: string }): Promise<void> {
      await db
        .insertInto('session_exceptions')
        .values({ session_id: q.sessionId, occurrence_date: q.date })
        .onConflict((oc) => oc.columns(['session_id', 'occurrence_date']).doNothing())
        .execute();
      await db.deleteFrom('session_participants').where('session_id', '=', q.sessionId).where('occurrence_date', '=', q.date).execute();
    },
  };
}
