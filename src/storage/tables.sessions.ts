import type { Flag } from './columns.js';
import type { CalendarDate, Instant, SessionType, Status } from '../domain/vocabulary.js';

/** The tables around a session row: its occurrences, ties, edited and removed days. */

/**
 * The occurrence index: one row per occurrence of every session (a one-off session's
 * single day included), through the session's indexed_through. Kept in the transaction of
 * every write that changes a session's days, visibility or completion, so that dated
 * listings and time-triggered events read the rows they show instead of expanding series.
 */
export interface SessionOccurrencesTable {
  session_id: number;
  /** The local date of the occurrence. */
  occurrence_date: CalendarDate;
  org_id: number;
  created_by: number;
  is_public: Flag;
  type: SessionType;
  /** 1 when the session is completed or its host completed this occurrence. */
  completed: Flag;
  starts_at: Instant;
  ends_at: Instant;
  /** The local day it takes place on: occurrence_date, or the day an override moved it to. Dated listings filter on it. */
  day: CalendarDate;
}

export interface SessionCollaboratorsTable {
  session_id: number;
  user_id: number;
}

/** A person tied to a session (creator, collaborator, participant), kept by triggers (migration 0026). */
export interface SessionAccessTable {
  user_id: number;
  session_id: number;
  org_id: number;
  starts_at: Instant;
  is_public: Flag;
  /** Copied from the session (migration 0029), so that a personal stream filters on index entries. */
  type: SessionType;
  status: Status;
  search_name: string;
  /** Copied from the session (migration 0030): a dated page probes a one-off's occurrence only when it starts in the range. */
  is_recurring: Flag;
  /** Copied from the session (migration 0031): a dated page reads the reader's own private occurrences apart. */
  created_by: number;
}

export interface SessionParticipantsTable {
  session_id: number;
  user_id: number;
  /** The occurrence joined, or '' for a one-off session. */
  occurrence_date: CalendarDate;
  joined_at: Instant;
  completed_at: Instant | null;
}

/**
 * One edited occurrence of a series (contract section 10): `fields` is the JSON of the
 * session columns that day sets (OverrideFields); the others follow the series.
 */
export interface SessionOverridesTable {
  session_id: number;
  /** The occurrence's original date: its key, also when the override moves it to another day. */
  occurrence_date: CalendarDate;
  fields: string;
  updated_at: Instant;
}

export interface SessionExceptionsTable {
  session_id: number;
  /** A deleted occurrence of a recurring session. */
  occurrence_date: CalendarDate;
}
