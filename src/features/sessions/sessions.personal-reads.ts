import type { Storage } from '../../storage/database.js';
import type { SessionRow } from '../../storage/tables.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { tiedIds } from './sessions.listing-filters.js';
import type { SessionsRepository } from './sessions.repository.js';
import { occurrenceOf, occurrenceView } from './sessions.occurrences.js';
import { overriddenRow, overrideRows } from './sessions.overrides.js';
import { parseOccurrenceKey } from './sessions.participants-repository.js';
import { withRRules } from './sessions.series.js';
import { visibleTo } from './sessions.visibility.js';

export type PersonalReads = ReturnType<typeof createPersonalReads>;

/** One edited occurrence of a series as a calendar shows it: the row with its override, at its instants. */
export interface EditedOccurrence {
  occurrence_date: string;
  session: SessionRow;
}

/** A session a feed shows, with its edited occurrences (a series' exceptions, RECURRENCE-ID in iCalendar). */
export type FeedRow = SessionRow & { edited: EditedOccurrence[] };

/** The sessions a user created, collaborates on or joined and can still see, the most recently changed first: what a calendar feed shows. */
export function createPersonalReads(storage: Storage, sessions: SessionsRepository) {
  function shownTo(user: AuthenticatedUser, limit: number) {
    return storage.db
      .selectFrom('sessions')
      .where(visibleTo(user))
      .where((eb) => eb('sessions.id', 'in', tiedIds(storage.db, user)))
      .orderBy('sessions.updated_at', 'desc')
      .orderBy('sessions.id', 'desc')
      .limit(limit);
  }
  return {
    /** Those sessions, at most `limit`, each with the rrule it shows (series.rruleOf) and its edited occurrences. */
    async sessionsOf(user: AuthenticatedUser, limit: number): Promise<FeedRow[]> {
      const rows = await withRRules(sessions, storage.db, await shownTo(user, limit).selectAll('sessions').execute());
      const series = rows.filter((r) => r.is_recurring === 1).map((r) => r.id);
      const [overrides, exceptions] = await Promise.all([overrideRows.of(storage.db, series), sessions.exceptionsOf(storage.db, series)]);
      const byId = new Map(rows.map((r) => [r.id, r]));
      const edited = new Map<number, EditedOccurrence[]>();
      for (const [key, fields] of overrides) {
        const { sessionId, date } = parseOccurrenceKey(key);
        const row = byId.get(sessionId) as SessionRow;
        if (occurrenceOf(row, exceptions.get(sessionId), date) !== date) continue;
        const { starts_at, ends_at } = occurrenceView(row, date, fields);
        const list = edited.get(sessionId) ?? [];
        list.push({ occurrence_date: date, session: { ...overriddenRow(row, fields), starts_at, ends_at } });
        edited.set(sessionId, list);
      }
      return rows.map((r) => ({ ...r, edited: (edited.get(r.id) ?? []).sort((a, b) => (a.occurrence_date < b.occurrence_date ? -1 : 1)) }));
    },

    /** What identifies each version of those sessions (id, updated_at, sequence), in the same order: a cheap fingerprint of the feed. */
    versionsOf(user: AuthenticatedUser, limit: number) {
      return shownTo(user, limit).select(['sessions.id', 'sessions.updated_at', 'sessions.sequence']).execute();
    },
  };
}
