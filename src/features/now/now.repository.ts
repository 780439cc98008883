import type { ExpressionBuilder } from 'kysely';
import type { Storage } from '../../storage/database.js';
import type { Database } from '../../storage/tables.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { involvedIds } from '../sessions/sessions.listing-filters.js';
import { RECURRENCE_COLUMNS } from '../sessions/sessions.model.js';

type Occ = ExpressionBuilder<Database, 'session_occurrences'>;

const OCCURRENCE_COLUMNS = [
  'session_occurrences.session_id',
  'session_occurrences.occurrence_date',
  'session_occurrences.starts_at',
  'session_occurrences.ends_at',
  'session_occurrences.completed',
] as const;

export type NowRepository = ReturnType<typeof createNowRepository>;

/**
 * What /me/now reads: the occurrence index around an instant, over the sessions a user
 * created, collaborates on or joined (in the user's orgs, where all of them are visible to
 * the user). Those are few next to an org's, so their index rows are read by session,
 * through the primary key, as dated listings read them.
 */
export function createNowRepository(storage: Storage) {
  const { db } = storage;
  const mine = (user: AuthenticatedUser) => (eb: Occ) =>
    eb.and([
      eb('session_occurrences.org_id', 'in', user.orgIds),
      eb.or([
        eb('session_occurrences.session_id', 'in', db.selectFrom('sessions').select('sessions.id').where('sessions.created_by', '=', user.id).where('sessions.org_id', 'in', user.orgIds)),
        eb('session_occurrences.session_id', 'in', involvedIds(db, user)),
      ]),
    ]);

  return {
    /**
     * Occurrences running at `at` (starts_at ≤ at < ends_at). `from`–`to` bound the local
     * dates to look at: a session lasts at most a day and local dates are within a day of UTC.
     */
    running(q: { user: AuthenticatedUser; at: string; from: string; to: string; limit: number }) {
      if (q.user.orgIds.length === 0) return Promise.resolve([]);
      return db
        .selectFrom('session_occurrences')
        .select([...OCCURRENCE_COLUMNS])
        .where(mine(q.user))
        .where('session_occurrences.occurrence_date', '>=', q.from)
        .where('session_occurrences.occurrence_date', '<=', q.to)
        .where('session_occurrences.starts_at', '<=', q.at)
        .where('session_occurrences.ends_at', '>', q.at)
        .orderBy('session_occurrences.starts_at')
        .orderBy('session_occurrences.session_id')
        .orderBy('session_occurrences.occurrence_date')
        .limit(q.limit)
        .execute();
    },

    /** The first indexed occurrence starting after `at` (local dates from `from` on). */
    next(q: { user: AuthenticatedUser; at: string; from: string }) {
      if (q.user.orgIds.length === 0) return Promise.resolve(undefined);
      return db
        .selectFrom('session_occurrences')
        .select([...OCCURRENCE_COLUMNS])
        .where(mine(q.user))
        .where('session_occurrences.occurrence_date', '>=', q.from)
        .where('session_occurrences.starts_at', '>', q.at)
        .orderBy('session_occurrences.starts_at')
        .orderBy('session_occurrences.session_id')
        .orderBy('session_occurrences.occurrence_date')
        .limit(1)
        .executeTakeFirst();
    },

    /**
     * The user's sessions the index does not hold through `through`: stored before it
     * existed, or not extended yet (the indexer is behind). Expanded per request.
     */
    unindexed(q: { user: AuthenticatedUser; through: string }) {
      if (q.user.orgIds.length === 0) return Promise.resolve([]);
      return db
        .selectFrom('sessions')
        .select([...RECURRENCE_COLUMNS.map((c) => `sessions.${c}` as const), 'sessions.indexed_through'])
        .where('sessions.org_id', 'in', q.user.orgIds)
        .where((eb) => eb.or([eb('sessions.indexed_through', 'is', null), eb('sessions.indexed_through', '<', q.through)]))
        .where((eb) => eb.or([eb('sessions.created_by', '=', q.user.id), eb('sessions.id', 'in', involvedIds(db, q.user))]))
        .orderBy('sessions.id')
        .execute();
    },
  };
}
