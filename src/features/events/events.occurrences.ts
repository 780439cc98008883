import type { Storage } from '../../storage/database.js';
import { type Crossing, type Reminder, sessionsApi } from '../sessions/sessions.api.js';

/** An occurrence that started or ended, and who is told: its creator, collaborators and those who joined it (sessions' involvedUsers). */
export type Occurrence = Crossing;
export type { Reminder };

/** Occurrences announced per look at most (a look covers one poll interval). */
const MAX_PER_LOOK = 5_000;

/**
 * Occurrences that started or ended in a window, from the sessions' occurrence source
 * (the index: series are never expanded here), with the users involved: three statements
 * per window, whatever the number of streams.
 */
export function createOccurrenceFeed(storage: Storage) {
  const sessions = sessionsApi(storage);
  return {
    /** Starts and ends in (from, to], in time order. */
    between: (from: string, to: string): Promise<Occurrence[]> => sessions.crossing({ from, to, limit: MAX_PER_LOOK }),
    /** Reminders (`session.starting`) due in (from, to], each for one person, in time order. */
    reminders: (from: string, to: string): Promise<Reminder[]> => sessions.remindersIn({ from, to }),
  };
}
