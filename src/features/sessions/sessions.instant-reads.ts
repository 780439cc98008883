import { type ExpressionBuilder, sql } from 'kysely';
import type { Storage } from '../../storage/database.js';
import type { Database } from '../../storage/tables.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { tiedIds } from './sessions.listing-filters.js';
import { RECURRENCE_COLUMNS } from './sessions.model.js';
import type { DatedKey } from './sessions.occurrence-index.js';
import { dayWithin } from './sessions.occurrence-statements.js';

type Occ = ExpressionBuilder<Database, 'session_occurrences'>;

const KEY_COLUMNS = [
  'session_occurrences.session_id',
  'session_occurrences.occurrence_date',
  'session_occurrences.starts_at',
  'session_occurrences.ends_at',
  'session_occurrences.completed',
] as const;

const keyOf = (r: { session_id: number; occurrence_date: string; starts_at: string; ends_at: string; completed: number }): DatedKey => ({
  startsAt: r.starts_at,
  id: r.session_id,
  date: r.occurrence_date,
  endsAt: r.ends_at,
  completed: r.completed === 1,
});

/** An occurrence of the index that starts or ends at an instant, with what tells who is involved. */
export interface IndexedInstant {
  session_id: number;
  occurrence_date: string;
  starts_at: string;
  ends_at: string;
  org_id: number;
  created_by: number;
}

export type InstantReads = ReturnType<typeof createInstantReads>;

/**
 * The occurrence index read around instants: what runs at one over a user's own and
 * involved sessions (those are few next to an org's, so their rows are read by session,
 * through the primary key, as dated listings read them), and what starts or ends in a
 * window over everyone's (by the `starts_at` and `ends_at` indexes). Series are not expanded here.
 */
export function createInstantReads(storage: Storage) {
  const { db } = storage;
  const mine = (user: AuthenticatedUser) => (eb: Occ) =>
    eb.and([
      eb('session_occurrences.org_id', 'in', user.orgIds),
      eb('session_occurrences.session_id', 'in', tiedIds(db, user)),
    ]);
  const inOrder = <Q extends { orderBy: (c: 'session_occurrences.starts_at' | 'session_occurrences.session_id' | 'session_occurrences.occurrence_date') => Q }>(q: Q) =>
    q.orderBy('session_occurrences.starts_at').orderBy('session_occurrences.session_id').orderBy('session_occurrences.occurrence_date');

  return {
    /**
     * The user's occurrences running at `at` (starts_at ≤ at < ends_at). `from`–`to` bound the local
     * dates to look at: a session lasts at most a day and local dates are within a day of UTC.
     */
    async running(q: { user: AuthenticatedUser; at: string; from: string; to: string; limit: number }): Promise<DatedKey[]> {
      if (q.user.orgIds.length === 0) return [];
      const query = db
        .selectFrom('session_occurrences')
        .select([...KEY_COLUMNS])
        .where(mine(q.user))
        .where((eb) => dayWithin(eb, q.from, q.to))
        .where('session_occurrences.starts_at', '<=', q.at)
        .where('session_occurrences.ends_at', '>', q.at);
      return (await inOrder(query).limit(q.limit).execute()).map(keyOf);
    },

    /** The user's first indexed occurrence starting after `at` (local dates from `from` on). */
    async next(q: { user: AuthenticatedUser; at: string; from: string }): Promise<DatedKey | undefined> {
      if (q.user.orgIds.length === 0) return undefined;
      const query = db
        .selectFrom('session_occurrences')
        .select([...KEY_COLUMNS])
        .where(mine(q.user))
        .where((eb) => dayWithin(eb, q.from))
        .where('session_occurrences.starts_at', '>', q.at);
      const row = await inOrder(query).limit(1).executeTakeFirst();
      return row === undefined ? undefined : keyOf(row);
    },

    /**
     * The user's sessions the index does not hold through `through`: stored before it
     * existed, or not extended yet (the indexer is behind). Expanded per request.
     */
    unindexedOf(q: { user: AuthenticatedUser; through: string }) {
      if (q.user.orgIds.length === 0) return Promise.resolve([]);
      return db
        .selectFrom('sessions')
        .select([...RECURRENCE_COLUMNS.map((c) => `sessions.${c}` as const), 'sessions.indexed_through'])
        .where('sessions.org_id', 'in', q.user.orgIds)
        .where((eb) => eb.or([eb('sessions.indexed_through', 'is', null), eb('sessions.indexed_through', '<', q.through)]))
        .where((eb) => eb('sessions.id', 'in', tiedIds(db, q.user)))
        .orderBy('sessions.id')
        .execute();
    },

    /** Occurrences whose `column` is in (from, to], in that order, at most `limit` (none: all). */
    crossing(column: 'starts_at' | 'ends_at', q: { from: string; to: string; limit?: number | undefined }): Promise<IndexedInstant[]> {
      const query = db
        .selectFrom('session_occurrences')
        .select(['session_id', 'occurrence_date', 'starts_at', 'ends_at', 'org_id', 'created_by'])
        .where(column, '>', q.from)
        .where(column, '<=', q.to)
        .orderBy(column);
      return (q.limit === undefined ? query : query.limit(q.limit)).execute();
    },

    /** Collaborations (date null) and participation rows (by occurrence date) of the given sessions. */
    involvement(sessionIds: readonly number[]): Promise<{ session_id: number; user_id: number; occurrence_date: string | null }[]> {
      if (sessionIds.length === 0) return Promise.resolve([]);
      const ids = [...new Set(sessionIds)];
      return db
        .selectFrom('session_collaborators')
        .select(['session_id', 'user_id', sql<string | null>`null`.as('occurrence_date')])
        .where('session_id', 'in', ids)
        .unionAll(db.selectFrom('session_participants').select(['session_id', 'user_id', 'occurrence_date']).where('session_id', 'in', ids))
        .execute();
    },
  };
}
