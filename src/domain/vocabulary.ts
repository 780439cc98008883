/*
 * The domain's vocabulary: the values sessions, tasks and the change log are made of.
 * Neither HTTP nor storage owns them: the API schemas and the table types are both built
 * from these lists, so a value the API rejects cannot be written by code that compiles.
 * Imports nothing; every layer may import it.
 */

export const SESSION_TYPES = ['drop-in', 'standard'] as const;
export type SessionType = (typeof SESSION_TYPES)[number];

/** In the order a session moves through them (it only moves forward). */
export const STATUSES = ['waiting', 'in_progress', 'completed'] as const;
export type Status = (typeof STATUSES)[number];
/** Where an occurrence is in time by the server's clock (read-only; `status` is what people set). */
export const PHASES = ['upcoming', 'running', 'ended'] as const;
export type Phase = (typeof PHASES)[number];

export const OCCURRENCES = ['daily', 'weekly', 'monthly'] as const;
export type Occurrence = (typeof OCCURRENCES)[number];

export const MONTH_OPTIONS = ['exact', 'week_day'] as const;
export type MonthOption = (typeof MONTH_OPTIONS)[number];

/** The nth weekday of a month: 1–4, or -1 for the last. */
export const WEEK_POSITIONS = [1, 2, 3, 4, -1] as const;
export type WeekPosition = (typeof WEEK_POSITIONS)[number];

export const BLOCKER_MODES = ['preset', 'custom'] as const;
export type BlockerMode = (typeof BLOCKER_MODES)[number];

/** The JSON type a task's `source_id` was last sent with; the column holds its text. */
export const SOURCE_ID_TYPES = ['integer', 'string'] as const;
export type SourceIdType = (typeof SOURCE_ID_TYPES)[number];

export interface WebsiteBlocker {
  mode: BlockerMode;
  category: string[];
  urls: string[];
}

/** An ISO 8601 UTC instant as `Date.prototype.toISOString()` prints it; sorts as text. */
export type Instant = string;
/** A calendar date, `YYYY-MM-DD`; sorts as text. */
export type CalendarDate = string;

/** What the change log records a change of. */
export const CHANGE_KINDS = ['session', 'task'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/** How a record changed: participation (join, leave, complete) is a change of its session too. */
export const CHANGE_ACTIONS = ['created', 'updated', 'deleted', 'participation'] as const;
export type ChangeAction = (typeof CHANGE_ACTIONS)[number];

/** What a user does to a session's (or an occurrence's) participation. */
export const PARTICIPATION_ACTIONS = ['join', 'leave', 'complete'] as const;
export type ParticipationAction = (typeof PARTICIPATION_ACTIONS)[number];

/** Who could see a session before a change: every member of its org when it was public, else these users. */
export interface Audience {
  public: boolean;
  users: number[];
}
