import type { Storage } from '../../storage/database.js';
import { type ChangesRepository, createChangesRepository } from '../../changelog/changelog.repository.js';
import { type InstantReads, createInstantReads } from './sessions.instant-reads.js';
import { type OccurrenceIndex, createOccurrenceIndex } from './sessions.occurrence-index.js';
import { overrideRows } from './sessions.overrides.js';
import { type ParticipantsRepository, createParticipantsRepository } from './sessions.participants-repository.js';
import { type SessionsRepository, createSessionsRepository } from './sessions.repository.js';

/** What the sessions service works with: storage and the repositories built on it, once. */
export interface SessionsContext {
  storage: Storage;
  sessions: SessionsRepository;
  participants: ParticipantsRepository;
  index: OccurrenceIndex;
  overrides: typeof overrideRows;
  instants: InstantReads;
  changes: ChangesRepository;
}

export function createSessionsContext(storage: Storage): SessionsContext {
  return {
    storage,
    sessions: createSessionsRepository(storage),
    participants: createParticipantsRepository(),
    index: createOccurrenceIndex(storage),
    overrides: overrideRows,
    instants: createInstantReads(storage),
    changes: createChangesRepository(storage),
  };
}
