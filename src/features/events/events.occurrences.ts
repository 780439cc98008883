import { sql } from 'kysely';
import type { Storage } from '../../storage/database.js';
import { ONE_OFF } from '../sessions/sessions.occurrences.js';
import { occurrenceKey } from '../sessions/sessions.participants-repository.js';

/** An occurrence that started or ended, and who is told: its creator, collaborators and those who joined it. */
export interface Occurrence {
  event: 'session.started' | 'session.ended';
  session_id: number;
  occurrence_date: string;
  starts_at: string;
  ends_at: string;
  org_id: number;
  users: ReadonlySet<number>;
}

/** Occurrences announced per look at most (a look covers one poll interval). */
const MAX_PER_LOOK = 5_000;

/**
 * Occurrences that started or ended in a window, from the occurrence index (by its
 * `starts_at` and `ends_at` indexes: series are never expanded here), with the users
 * involved: three statements per window, whatever the number of streams.
 */
export function createOccurrenceFeed(storage: Storage) {
  const { db } = storage;
  const columns = ['session_id', 'occurrence_date', 'starts_at', 'ends_at', 'org_id', 'created_by'] as const;
  return {
    /** Starts and ends in (from, to], in time order. */
    async between(from: string, to: string): Promise<Occurrence[]> {
      const [started, ended] = await Promise.all([
        db.selectFrom('session_occurrences').select(columns).where('starts_at', '>', from).where('starts_at', '<=', to).orderBy('starts_at').limit(MAX_PER_LOOK).execute(),
        db.selectFrom('session_occurrences').select(columns).where('ends_at', '>', from).where('ends_at', '<=', to).orderBy('ends_at').limit(MAX_PER_LOOK).execute(),
      ]);
      if (started.length === 0 && ended.length === 0) return [];
      const ids = [...new Set([...started, ...ended].map((o) => o.session_id))];
      // A collaborator is involved in every occurrence; a participant in the one joined (a
      // series) or in the session (a one-off, joined as ONE_OFF), as for webhooks.
      const involved = await db
        .selectFrom('session_collaborators')
        .select(['session_id', 'user_id', sql<string | null>`null`.as('occurrence_date')])
        .where('session_id', 'in', ids)
        .unionAll(db.selectFrom('session_participants').select(['session_id', 'user_id', 'occurrence_date']).where('session_id', 'in', ids))
        .execute();
      // By occurrence; who is involved in every occurrence is kept under ONE_OFF.
      const users = new Map<string, Set<number>>();
      for (const r of involved) {
        const key = occurrenceKey(r.session_id, r.occurrence_date ?? ONE_OFF);
        users.set(key, (users.get(key) ?? new Set()).add(r.user_id));
      }
      const of = (event: Occurrence['event'], o: (typeof started)[number]): Occurrence & { at: string } => ({
        event,
        session_id: o.session_id,
        occurrence_date: o.occurrence_date,
        starts_at: o.starts_at,
        ends_at: o.ends_at,
        org_id: o.org_id,
        users: new Set([o.created_by, ...(users.get(occurrenceKey(o.session_id, ONE_OFF)) ?? []), ...(users.get(occurrenceKey(o.session_id, o.occurrence_date)) ?? [])]),
        at: event === 'session.started' ? o.starts_at : o.ends_at,
      });
      const all = [...started.map((o) => of('session.started', o)), ...ended.map((o) => of('session.ended', o))];
      return all.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.event === 'session.ended' ? -1 : 1));
    },
  };
}
