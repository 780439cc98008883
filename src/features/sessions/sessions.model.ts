import {
  type Flag,
  foldForSearch,
  parseJson,
  toJson,
} from '../../storage/columns.js';
import type {
  MonthOption,
  Occurrence,
  SessionType,
  Status,
  WebsiteBlocker,
  WeekPosition,
} from '../../domain/vocabulary.js';
import type { NewSession, SessionRow } from '../../storage/tables.js';
import type { RecurrencePattern } from '../recurrence/recurrence.engine.js';
import { nextOccurrenceOnOrAfter } from '../recurrence/recurrence.engine.js';
import { toRRule } from '../recurrence/recurrence.rrule.js';
import { canonicalTimeZone, occurrenceInstants, parseTimeInput } from '../recurrence/recurrence.time.js';
import type { CreateSessionBody } from './sessions.schema.js';

/** A session's writable state, as the service reasons about it (time in minutes). */
export interface SessionModel {
  org_id: number;
  name: string;
  type: SessionType;
  duration: number;
  schedule: string;
  time: number;
  timezone: string;
  is_public: boolean;
  collaborator: string[];
  status: Status;
  website_blocker_enabled: boolean;
  website_blocker: WebsiteBlocker | null;
  snooze_enabled: boolean;
  snooze_apps: Record<string, boolean>;
  is_recurring: Flag;
  recurring_start: string | null;
  recurring_ends: string | null;
  occurrence: Occurrence | null;
  recurring_days: number[];
  recurring_month_option: MonthOption | null;
  recurring_month_week_pos: WeekPosition | null;
  recurring_month_week_day: number | null;
  fallback_option: Flag;
  reminders: number[] | null;
}

type WritableInput = Partial<Omit<CreateSessionBody, 'time'>> & { time?: string };

const WRITABLE = [
  'org_id', 'name', 'type', 'duration', 'schedule', 'time', 'timezone', 'is_public', 'collaborator', 'status',
  'website_blocker_enabled', 'website_blocker', 'snooze_enabled', 'snooze_apps', 'is_recurring', 'recurring_start',
  'recurring_ends', 'occurrence', 'recurring_days', 'recurring_month_option', 'recurring_month_week_pos',
  'recurring_month_week_day', 'fallback_option', 'reminders',
] as const satisfies readonly (keyof SessionModel)[];

/**
 * The writable fields present in a body (read-only echoes dropped), minus those `skip`
 * names: when the schema rejected some fields, the rest can still be checked.
 */
export function writableFields(body: WritableInput, skip: (field: string) => boolean = () => false): Partial<SessionModel> {
  const out: Record<string, unknown> = {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return out;
  for (const key of WRITABLE) {
    const value = body[key];
    if (value === undefined || skip(key)) continue;
    if (key === 'time') out.time = parseTimeInput(value as string);
    else if (key === 'name') out.name = (value as string).trim();
    else if (key === 'timezone') out.timezone = canonicalTimeZone(value as string) ?? value;
    else if (key === 'website_blocker' && value !== null) {
      const wb = value as Partial<WebsiteBlocker> & Pick<WebsiteBlocker, 'mode'>;
      out.website_blocker = { mode: wb.mode, category: wb.category ?? [], urls: wb.urls ?? [] };
    } else out[key] = value;
  }
  return out;
}

/** The columns a series' occurrences are computed from. */
export const RECURRENCE_COLUMNS = [
  'id', 'schedule', 'time_minutes', 'duration', 'timezone', 'status', 'is_recurring', 'recurring_start', 'recurring_ends',
  'occurrence', 'recurring_days', 'recurring_month_option', 'recurring_month_week_pos', 'recurring_month_week_day', 'fallback_option',
] as const satisfies readonly (keyof SessionRow)[];
export type RecurrenceRow = Pick<SessionRow, (typeof RECURRENCE_COLUMNS)[number]>;

/** The fields a session's days follow: its date, and for a series its pattern. */
export const DAY_FIELDS = [
  'schedule', 'is_recurring', 'recurring_start', 'recurring_ends', 'occurrence', 'recurring_days', 'recurring_month_option',
  'recurring_month_week_pos', 'recurring_month_week_day', 'fallback_option',
] as const satisfies readonly (keyof SessionModel)[];
export type RecurrenceFields = Pick<SessionModel, (typeof DAY_FIELDS)[number]>;

export function recurrenceFromRow(row: RecurrenceRow): RecurrenceFields {
  return {
    schedule: row.schedule,
    is_recurring: row.is_recurring,
    recurring_start: row.recurring_start,
    recurring_ends: row.recurring_ends,
    occurrence: row.occurrence,
    recurring_days: parseJson(row.recurring_days),
    recurring_month_option: row.recurring_month_option,
    recurring_month_week_pos: row.recurring_month_week_pos,
    recurring_month_week_day: row.recurring_month_week_day,
    fallback_option: row.fallback_option,
  };
}

export function modelFromRow(row: SessionRow, collaborators: string[]): SessionModel {
  const r = recurrenceFromRow(row);
  // Copied by name, not spread: with `...r` every record V8 built took a slow path
  // (docs/performance.md).
  return {
    schedule: r.schedule,
    is_recurring: r.is_recurring,
    recurring_start: r.recurring_start,
    recurring_ends: r.recurring_ends,
    occurrence: r.occurrence,
    recurring_days: r.recurring_days,
    recurring_month_option: r.recurring_month_option,
    recurring_month_week_pos: r.recurring_month_week_pos,
    recurring_month_week_day: r.recurring_month_week_day,
    fallback_option: r.fallback_option,
    org_id: row.org_id,
    name: row.name,
    type: row.type,
    duration: row.duration,
    time: row.time_minutes,
    timezone: row.timezone,
    is_public: row.is_public === 1,
    collaborator: collaborators,
    status: row.status,
    website_blocker_enabled: row.website_blocker_enabled === 1,
    website_blocker: row.website_blocker === null ? null : parseJson(row.website_blocker),
    snooze_enabled: row.snooze_enabled === 1,
    snooze_apps: parseJson(row.snooze_apps),
    reminders: row.reminders === null ? null : parseJson(row.reminders),
  };
}

/**
 * A one-off session has no recurrence: its recurrence fields are accepted and ignored, and
 * read back empty (switching a series off clears them).
 */
export function normalized(m: SessionModel): SessionModel {
  if (m.is_recurring === 1) return m;
  return {
    ...m,
    recurring_start: null,
    recurring_ends: null,
    occurrence: null,
    recurring_days: [],
    recurring_month_option: null,
    recurring_month_week_pos: null,
    recurring_month_week_day: null,
    fallback_option: 0,
  };
}

/**
 * The columns a model writes (everything but ids, creator and created_at); `exceptions`
 * are a series' removed occurrences, which its first occurrence and rrule leave out.
 * A series is listed at the instants of its first occurrence (never an instant at which
 * nothing happens). A write that leaves a series none is refused (checkSessionRules) and
 * deleting its last one deletes it; rows stored before that rule keep their schedule's.
 */
export function columnsOf(
  model: SessionModel,
  now: string,
  exceptions?: ReadonlySet<string>,
): Omit<NewSession, 'created_by' | 'created_at' | 'indexed_through'> {
  const m = normalized(model);
  const pattern = patternOf(m, exceptions);
  const first = pattern === null ? null : nextOccurrenceOnOrAfter(pattern, pattern.start);
  const { starts_at, ends_at } = occurrenceInstants(first ?? m.schedule, m.time, m.duration, m.timezone);
  return {
    org_id: m.org_id,
    name: m.name,
    type: m.type,
    duration: m.duration,
    schedule: m.schedule,
    time_minutes: m.time,
    timezone: m.timezone,
    starts_at,
    ends_at,
    is_public: m.is_public ? 1 : 0,
    status: m.status,
    website_blocker_enabled: m.website_blocker_enabled ? 1 : 0,
    website_blocker: m.website_blocker === null ? null : toJson(m.website_blocker),
    snooze_enabled: m.snooze_enabled ? 1 : 0,
    snooze_apps: toJson(m.snooze_apps),
    is_recurring: m.is_recurring,
    recurring_start: m.recurring_start,
    recurring_ends: m.recurring_ends,
    occurrence: m.occurrence,
    recurring_days: toJson(m.recurring_days),
    recurring_month_option: m.recurring_month_option,
    recurring_month_week_pos: m.recurring_month_week_pos,
    recurring_month_week_day: m.recurring_month_week_day,
    fallback_option: m.fallback_option,
    reminders: m.reminders === null ? null : toJson(m.reminders),
    // DTSTART at the first occurrence too, so that rrule, starts_at and /occurrences agree.
    rrule: pattern === null ? null : toRRule(pattern, { date: first ?? pattern.start, minutes: m.time, timezone: m.timezone }),
    search_name: foldForSearch(m.name),
    updated_at: now,
  };
}

/** The recurrence pattern of a series, or null for a one-off session. */
export function patternOf(m: RecurrenceFields, exceptions?: ReadonlySet<string>): RecurrencePattern | null {
  if (m.is_recurring !== 1 || m.occurrence === null) return null;
  return {
    start: m.recurring_start ?? m.schedule,
    ends: m.recurring_ends,
    occurrence: m.occurrence,
    recurringDays: m.recurring_days,
    monthOption: m.recurring_month_option,
    weekPos: m.recurring_month_week_pos,
    weekDay: m.recurring_month_week_day,
    fallback: m.fallback_option,
    ...(exceptions === undefined ? {} : { exceptions }),
  };
}
