/*
 * The values typed columns hold. Storage owns them because the tables do; the API
 * schemas are built from the same lists, so a value the API rejects cannot be written
 * by code that compiles.
 */

export const SESSION_TYPES = ['drop-in', 'standard'] as const;
export type SessionType = (typeof SESSION_TYPES)[number];

/** In the order a session moves through them (it only moves forward). */
export const STATUSES = ['waiting', 'in_progress', 'completed'] as const;
export type Status = (typeof STATUSES)[number];

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

export type Flag = 0 | 1;
/** An ISO 8601 UTC instant as `Date.prototype.toISOString()` prints it; sorts as text. */
export type Instant = string;
/** A calendar date, `YYYY-MM-DD`; sorts as text. */
export type CalendarDate = string;

declare const jsonOf: unique symbol;
/** JSON text holding a T: written only by toJson, read only by parseJson. */
export type JsonText<T> = string & { readonly [jsonOf]: T };

export const toJson = <T>(value: T): JsonText<T> => JSON.stringify(value) as JsonText<T>;
export const parseJson = <T>(text: JsonText<T>): T => JSON.parse(text) as T;

/**
 * A session name as keyword search compares it: Unicode-aware case folding done here, in
 * JavaScript, so that both databases compare the same text (SQLite's own folding covers
 * ASCII only; PostgreSQL's depends on the database's locale). Upper-then-lower also folds
 * `ß` to `ss`, as full case folding does.
 */
export const foldForSearch = (text: string): string => text.normalize('NFC').toUpperCase().toLowerCase();

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
