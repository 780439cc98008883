import { type ExpressionBuilder, type Expression, type SqlBool, sql } from 'kysely';
import type { Db } from '../../storage/database.js';
import type { Database } from '../../storage/tables.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';

/**
 * The facts the visibility rule is made of, in some representation T: SQL conditions on a
 * session row (visibleTo) or booleans about a loaded one (canSee).
 */
interface VisibilityTerms<T> {
  /** The session belongs to one of the user's orgs. */
  member: T;
  public: T;
  /** The user created the session, collaborates on it or joined (any occurrence of) it. */
  tied: T;
}

interface Logic<T> {
  and(terms: T[]): T;
  or(terms: T[]): T;
}

/**
 * The visibility rule, stated once: a session is visible to a member of its org when it is
 * public or the user is tied to it. Everything else is 404. Every form of the rule (SQL,
 * in memory) is this function over another representation of its terms.
 */
const visibilityRule = <T>(t: VisibilityTerms<T>, l: Logic<T>): T => l.and([t.member, l.or([t.public, t.tied])]);

type Sessions = ExpressionBuilder<Database, 'sessions'>;

const sqlLogic = (eb: Sessions): Logic<Expression<SqlBool>> => ({ and: (terms) => eb.and(terms), or: (terms) => eb.or(terms) });

/** The terms as conditions on the `sessions` row in scope: the ties are session_access's rows (kept by triggers, migration 0026). */
function sqlTerms(eb: Sessions, user: Pick<AuthenticatedUser, 'id' | 'orgIds'>): VisibilityTerms<Expression<SqlBool>> {
  return {
    member: user.orgIds.length === 0 ? sql<SqlBool>`1 = 0` : eb('sessions.org_id', 'in', user.orgIds),
    public: eb('sessions.is_public', '=', 1),
    tied: eb.exists(
      eb.selectFrom('session_access as sa').select(sql`1`.as('one')).where('sa.user_id', '=', user.id).whereRef('sa.session_id', '=', 'sessions.id'),
    ),
  };
}

/** The rule as a condition on the `sessions` row in scope. */
export function visibleTo(user: Pick<AuthenticatedUser, 'id' | 'orgIds'>) {
  return (eb: Sessions): Expression<SqlBool> => visibilityRule(sqlTerms(eb, user), sqlLogic(eb));
}

/** The user created, collaborates on or joined the session, as a condition on the row in scope. */
export function tiedToInSql(user: Pick<AuthenticatedUser, 'id' | 'orgIds'>) {
  return (eb: Sessions): Expression<SqlBool> => sqlTerms(eb, user).tied;
}

/** What canSee needs to know of a session already loaded. */
export interface LoadedSessionFacts {
  org_id: number;
  is_public: number;
  created_by: number;
  collaboratorHandles: readonly string[];
  /** The user joined some occurrence of it. */
  joined: boolean;
}

const memoryLogic: Logic<boolean> = { and: (terms) => terms.every(Boolean), or: (terms) => terms.some(Boolean) };

/** The rule applied in memory to a loaded session (the event hub's many readers at once). */
export function canSee(user: Pick<AuthenticatedUser, 'id' | 'handle' | 'orgIds'>, s: LoadedSessionFacts): boolean {
  const terms: VisibilityTerms<boolean> = {
    member: user.orgIds.includes(s.org_id),
    public: s.is_public === 1,
    tied: s.created_by === user.id || s.collaboratorHandles.includes(user.handle) || s.joined,
  };
  return visibilityRule(terms, memoryLogic);
}

export async function isSessionVisible(db: Db, user: AuthenticatedUser, sessionId: number): Promise<boolean> {
  const row = await db.selectFrom('sessions').select('id').where('id', '=', sessionId).where(visibleTo(user)).executeTakeFirst();
  return row !== undefined;
}
