import { type ExpressionBuilder, type Expression, type SqlBool, sql } from 'kysely';
import type { Db } from '../../storage/database.js';
import type { Database } from '../../storage/tables.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';

/**
 * A session is visible to a member of its org when it is public, or the user
 * created it, collaborates on it or has joined it. Everything else is 404.
 */
export function visibleTo(user: AuthenticatedUser) {
  return (eb: ExpressionBuilder<Database, 'sessions'>): Expression<SqlBool> => {
    if (user.orgIds.length === 0) return sql<SqlBool>`1 = 0`;
    return eb.and([
      eb('sessions.org_id', 'in', user.orgIds),
      eb.or([
        eb('sessions.is_public', '=', 1),
        eb('sessions.created_by', '=', user.id),
        involves(eb, user.id),
      ]),
    ]);
  };
}

/** The user collaborates on or has joined (any occurrence of) the session. */
export function involves(eb: ExpressionBuilder<Database, 'sessions'>, userId: number): Expression<SqlBool> {
  return eb.or([
    eb.exists(
      eb
        .selectFrom('session_collaborators as sc')
        .select(sql`1`.as('one'))
        .whereRef('sc.session_id', '=', 'sessions.id')
        .where('sc.user_id', '=', userId),
    ),
    eb.exists(
      eb
        .selectFrom('session_participants as sp')
        .select(sql`1`.as('one'))
        .whereRef('sp.session_id', '=', 'sessions.id')
        .where('sp.user_id', '=', userId),
    ),
  ]);
}

export async function isSessionVisible(db: Db, user: AuthenticatedUser, sessionId: number): Promise<boolean> {
  const row = await db.selectFrom('sessions').select('id').where('id', '=', sessionId).where(visibleTo(user)).executeTakeFirst();
  return row !== undefined;
}
