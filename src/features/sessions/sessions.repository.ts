import { type Expression, type ExpressionBuilder, type SelectQueryBuilder, type SqlBool, sql } from 'kysely';
import type { Db } from '../../storage/database.js';
import type { Dialect } from '../../storage/dialect.js';
import type { Database, NewSession, SessionRow } from '../../storage/tables.js';
import type { AuthenticatedUser } from '../auth/auth.repository.js';
import { RECURRENCE_COLUMNS, type RecurrenceRow } from './sessions.model.js';
import { involves, visibleTo } from './sessions.visibility.js';

export type SessionWithCreator = SessionRow & { creator_handle: string };

export interface SessionFilters {
  orgIds: readonly number[];
  channel?: 'public' | 'private';
  type?: string;
  completed?: 0 | 1;
  source?: 'user' | 'organization';
  keyword?: string;
}

type SessionQuery = SelectQueryBuilder<Database, 'sessions', SessionWithCreator>;

/**
 * Sessions with their creator's handle, looked up per row: as a join, PostgreSQL hashed the
 * whole users table for a page of 100 sessions (bench plan, scale 1).
 */
function baseQuery(db: Db): SessionQuery {
  return db
    .selectFrom('sessions')
    .selectAll('sessions')
    .select((eb) => eb.selectFrom('users').select('users.handle').whereRef('users.id', '=', 'sessions.created_by').as('creator_handle'))
    // created_by is a foreign key to users, so there is always a handle.
    .$narrowType<{ creator_handle: string }>();
}

type Filter = (eb: ExpressionBuilder<Database, 'sessions'>) => Expression<SqlBool>;

/** The listing filters (visibility first) as one condition over `sessions`. */
function filtersOf(user: AuthenticatedUser, f: SessionFilters, dialect: Dialect): Filter {
  const visible = visibleTo({ ...user, orgIds: [...f.orgIds] });
  return (eb) => {
    const terms = [visible(eb)];
    if (f.channel !== undefined) terms.push(eb('sessions.is_public', '=', f.channel === 'public' ? 1 : 0));
    if (f.type !== undefined) terms.push(eb('sessions.type', '=', f.type));
    if (f.completed !== undefined) terms.push(eb('sessions.status', f.completed === 1 ? '=' : '<>', 'completed'));
    if (f.source === 'user') terms.push(eb.or([eb('sessions.created_by', '=', user.id), involves(eb, user.id)]));
    if (f.keyword !== undefined) terms.push(dialect.containsInsensitive(eb.ref('sessions.name'), f.keyword));
    return eb.and(terms);
  };
}

export type PageKey = { startsAt: string; id: number };

/** Listing order: instants are ISO strings of one fixed format, so they order as text. */
export const keyBefore = (a: PageKey, b: PageKey) => a.startsAt < b.startsAt || (a.startsAt === b.startsAt && a.id < b.id);
/** keyBefore as a sort comparator. */
export const compareKeys = (a: PageKey, b: PageKey) => (keyBefore(a, b) ? -1 : keyBefore(b, a) ? 1 : 0);

/**
 * The keys of one page in listing order (starts_at, id) after the cursor, one org at a
 * time: within one org the `(org_id, starts_at, id, …)` index yields rows in listing order,
 * so each scan stops after `limit` matches, where `org_id in (…)` read and sorted every
 * session of every org. The rows are read afterwards, for the page only (sessionsByIds).
 */
async function pageKeys(db: Db, f: SessionFilters, filter: Filter, after: PageKey | undefined, limit: number): Promise<PageKey[]> {
  const perOrg = await Promise.all(
    f.orgIds.map((orgId) => {
      let q = db
        .selectFrom('sessions')
        .select(['sessions.id', 'sessions.starts_at'])
        .where('sessions.org_id', '=', orgId)
        .where(filter);
      if (after !== undefined) q = q.where((eb) => eb(eb.refTuple('sessions.starts_at', 'sessions.id'), '>', eb.tuple(after.startsAt, after.id)));
      return q.orderBy('sessions.starts_at').orderBy('sessions.id').limit(limit).execute();
    }),
  );
  const keys = perOrg.flat().map((r) => ({ startsAt: r.starts_at, id: r.id }));
  return keys.sort(compareKeys).slice(0, limit);
}

/**
 * The sessions among `ids` that are still visible and match the filters, by id. Applied
 * again because a session may change between finding a page and reading it: one made
 * private meanwhile is never shown.
 */
export async function sessionsByIds(
  db: Db,
  dialect: Dialect,
  user: AuthenticatedUser,
  f: SessionFilters,
  ids: readonly number[],
): Promise<Map<number, SessionWithCreator>> {
  if (ids.length === 0) return new Map();
  const rows = await baseQuery(db).where('sessions.id', 'in', [...new Set(ids)]).where(filtersOf(user, f, dialect)).execute();
  return new Map(rows.map((r) => [r.id, r]));
}

export async function findVisibleSession(db: Db, user: AuthenticatedUser, id: number): Promise<SessionWithCreator | undefined> {
  return baseQuery(db).where('sessions.id', '=', id).where(visibleTo(user)).executeTakeFirst();
}

/** The session whatever its visibility: only for re-reading one the caller has already been allowed to see. */
export async function findSession(db: Db, id: number): Promise<SessionWithCreator | undefined> {
  return baseQuery(db).where('sessions.id', '=', id).executeTakeFirst();
}

/** Keys of the visible sessions (a series counts once) in listing order after the cursor. */
export async function sessionKeys(
  db: Db,
  dialect: Dialect,
  user: AuthenticatedUser,
  f: SessionFilters,
  after: PageKey | undefined,
  limit: number,
): Promise<PageKey[]> {
  return pageKeys(db, f, filtersOf(user, f, dialect), after, limit);
}

/** Keys of the one-off sessions whose local day is in [from, to], in listing order after the cursor. */
export async function oneOffKeysInRange(
  db: Db,
  dialect: Dialect,
  user: AuthenticatedUser,
  f: SessionFilters,
  from: string,
  to: string,
  after: PageKey | undefined,
  limit: number,
): Promise<PageKey[]> {
  const filters = filtersOf(user, f, dialect);
  const filter: Filter = (eb) =>
    eb.and([filters(eb), eb('sessions.is_recurring', '=', 0), eb('sessions.schedule', '>=', from), eb('sessions.schedule', '<=', to)]);
  return pageKeys(db, f, filter, after, limit);
}

/**
 * Series that may have an occurrence in [from, to]: only the columns their occurrences are
 * computed from, as a listing expands every one of them but shows only a page.
 */
export async function listSeriesOverlapping(
  db: Db,
  dialect: Dialect,
  user: AuthenticatedUser,
  f: SessionFilters,
  from: string,
  to: string,
): Promise<RecurrenceRow[]> {
  return db
    .selectFrom('sessions')
    .select(RECURRENCE_COLUMNS.map((c) => `sessions.${c}` as const))
    .where(filtersOf(user, f, dialect))
    .where('sessions.is_recurring', '=', 1)
    .where((eb) => eb(eb.fn.coalesce('sessions.recurring_start', 'sessions.schedule'), '<=', to))
    .where((eb) => eb.or([eb('sessions.recurring_ends', 'is', null), eb('sessions.recurring_ends', '>=', from)]))
    .orderBy('sessions.id')
    .execute();
}

/** Collaborators' handles per session, in handle order; each handle is looked up by primary key (see baseQuery). */
export async function collaboratorHandles(db: Db, sessionIds: readonly number[]): Promise<Map<number, string[]>> {
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
}

export async function exceptionsOf(db: Db, sessionIds: readonly number[]): Promise<Map<number, Set<string>>> {
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
}

export const occurrenceKey = (sessionId: number, occurrenceDate: string) => `${sessionId}|${occurrenceDate}`;

/**
 * Participants other than the host, per (session, occurrence) key, for the given
 * occurrences (a long series has many; only the ones shown are counted).
 */
export async function participantCounts(
  db: Db,
  keys: readonly { sessionId: number; occurrenceDate: string }[],
): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (keys.length === 0) return out;
  const rows = await db
    .selectFrom('session_participants as sp')
    .innerJoin('sessions', 'sessions.id', 'sp.session_id')
    .select(['sp.session_id', 'sp.occurrence_date', (eb) => eb.fn.countAll<number>().as('n')])
    .where('sp.session_id', 'in', [...new Set(keys.map((k) => k.sessionId))])
    .where('sp.occurrence_date', 'in', [...new Set(keys.map((k) => k.occurrenceDate))])
    .whereRef('sp.user_id', '<>', 'sessions.created_by')
    .groupBy(['sp.session_id', 'sp.occurrence_date'])
    .execute();
  for (const r of rows) out.set(occurrenceKey(r.session_id, r.occurrence_date), Number(r.n));
  return out;
}

export async function participationOf(db: Db, sessionId: number, occurrenceDate: string, userId: number) {
  return db
    .selectFrom('session_participants')
    .select(['joined_at', 'completed_at'])
    .where('session_id', '=', sessionId)
    .where('occurrence_date', '=', occurrenceDate)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

/** Occurrences of the given series in [from, to] the host has completed, by key. */
export async function hostCompletions(db: Db, sessionIds: readonly number[], from: string, to: string): Promise<Set<string>> {
  if (sessionIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('session_participants as sp')
    .innerJoin('sessions', 'sessions.id', 'sp.session_id')
    .select(['sp.session_id', 'sp.occurrence_date'])
    .where('sp.session_id', 'in', [...new Set(sessionIds)])
    .where('sp.occurrence_date', '>=', from)
    .where('sp.occurrence_date', '<=', to)
    .whereRef('sp.user_id', '=', 'sessions.created_by')
    .where('sp.completed_at', 'is not', null)
    .execute();
  return new Set(rows.map((r) => occurrenceKey(r.session_id, r.occurrence_date)));
}

export async function insertSession(db: Db, values: NewSession): Promise<number> {
  const row = await db.insertInto('sessions').values(values).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

export async function updateSession(db: Db, id: number, values: Partial<NewSession>): Promise<void> {
  await db.updateTable('sessions').set(values).where('id', '=', id).execute();
}

export async function replaceCollaborators(db: Db, sessionId: number, userIds: readonly number[]): Promise<void> {
  await db.deleteFrom('session_collaborators').where('session_id', '=', sessionId).execute();
  if (userIds.length > 0) {
    await db
      .insertInto('session_collaborators')
      .values(userIds.map((user_id) => ({ session_id: sessionId, user_id })))
      .execute();
  }
}

export async function deleteSession(db: Db, id: number): Promise<void> {
  await db.deleteFrom('sessions').where('id', '=', id).execute();
}

export async function addException(db: Db, sessionId: number, occurrenceDate: string): Promise<void> {
  await db
    .insertInto('session_exceptions')
    .values({ session_id: sessionId, occurrence_date: occurrenceDate })
    .onConflict((oc) => oc.columns(['session_id', 'occurrence_date']).doNothing())
    .execute();
  await db.deleteFrom('session_participants').where('session_id', '=', sessionId).where('occurrence_date', '=', occurrenceDate).execute();
}

/** Forgets participation in the occurrences on or after `date` (they no longer exist). */
export async function deleteParticipationFrom(db: Db, sessionId: number, date: string): Promise<void> {
  await db.deleteFrom('session_participants').where('session_id', '=', sessionId).where('occurrence_date', '>=', date).execute();
}

/** Joins idempotently: a second join keeps the first joined_at. */
export async function join(db: Db, sessionId: number, occurrenceDate: string, userId: number, now: string): Promise<void> {
  await db
    .insertInto('session_participants')
    .values({ session_id: sessionId, occurrence_date: occurrenceDate, user_id: userId, joined_at: now, completed_at: null })
    .onConflict((oc) => oc.columns(['session_id', 'occurrence_date', 'user_id']).doNothing())
    .execute();
}

export async function leave(db: Db, sessionId: number, occurrenceDate: string, userId: number): Promise<void> {
  await db
    .deleteFrom('session_participants')
    .where('session_id', '=', sessionId)
    .where('occurrence_date', '=', occurrenceDate)
    .where('user_id', '=', userId)
    .execute();
}

export async function complete(db: Db, sessionId: number, occurrenceDate: string, userId: number, now: string): Promise<void> {
  await db
    .insertInto('session_participants')
    .values({ session_id: sessionId, occurrence_date: occurrenceDate, user_id: userId, joined_at: now, completed_at: now })
    .onConflict((oc) =>
      oc.columns(['session_id', 'occurrence_date', 'user_id']).doUpdateSet({
        completed_at: sql<string>`coalesce(session_participants.completed_at, ${now})`,
      }),
    )
    .execute();
}
