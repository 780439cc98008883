import type { Storage } from '../../storage/database.js';
import type { SessionRow } from '../../storage/tables.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { involvedIds } from './sessions.listing-filters.js';
import type { SessionsRepository } from './sessions.repository.js';
import { withRRules } from './sessions.series.js';
import { visibleTo } from './sessions.visibility.js';

export type PersonalReads = ReturnType<typeof createPersonalReads>;

/** The sessions a user created, collaborates on or joined and can still see, the most recently changed first: what a calendar feed shows. */
export function createPersonalReads(storage: Storage, sessions: SessionsRepository) {
  function shownTo(user: AuthenticatedUser, limit: number) {
    return storage.db
      .selectFrom('sessions')
      .where(visibleTo(user))
      .where((eb) => eb.or([eb('sessions.created_by', '=', user.id), eb('sessions.id', 'in', involvedIds(storage.db, user))]))
      .orderBy('sessions.updated_at', 'desc')
      .orderBy('sessions.id', 'desc')
      .limit(limit);
  }
  return {
    /** Those sessions, at most `limit`, each with the rrule it shows (series.rruleOf). */
    async sessionsOf(user: AuthenticatedUser, limit: number): Promise<SessionRow[]> {
      return withRRules(sessions, storage.db, await shownTo(user, limit).selectAll('sessions').execute());
    },

    /** What identifies each version of those sessions (id, updated_at, sequence), in the same order: a cheap fingerprint of the feed. */
    versionsOf(user: AuthenticatedUser, limit: number) {
      return shownTo(user, limit).select(['sessions.id', 'sessions.updated_at', 'sessions.sequence']).execute();
    },
  };
}
