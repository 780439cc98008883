import { type Static, Type } from 'typebox';
import {
  BLOCKER_MODES,
  MONTH_OPTIONS,
  OCCURRENCES,
  PHASES,
  SESSION_TYPES,
  STATUSES,
  WEEK_POSITIONS,
} from '../../domain/vocabulary.js';
import { Named, ReadOnly } from '../../toolkit/openapi.js';
import {
  CalendarDate,
  Instant,
  IntegerEnum,
  Nullable,
  OrNull,
  PositiveId,
  READ_ONLY_FIELDS,
  ReadOnlyIgnored,
  StringEnum,
  TimeZoneName,
  TrimmedText,
} from '../../toolkit/schema-helpers.js';
import { HANDLE_PATTERN } from '../auth/auth.caller.js';
import { Reminders } from '../auth/auth.schema.js';
import { WebsiteBlocker } from './sessions.blocker-schema.js';

/**
 * Removed occurrences one series keeps at most: a GET shows them all in its rrule's
 * EXDATE, so the list must stay bounded (dated listings leave it out of every item).
 */
export const MAX_REMOVED_OCCURRENCES = 1000;

/** Last day a session may be on: its instants must keep toISOString's four-digit years, which sort as text. */
export const LAST_SESSION_DATE = '9998-12-31';

/** A calendar date in the years 0001–9998 (see LAST_SESSION_DATE). */
export const SessionDate = (options: Record<string, unknown> = {}) =>
  CalendarDate({
    pattern: '^(?!0000-|9999-)\\d{4}-\\d{2}-\\d{2}$',
    'x-message': 'must be a real calendar date, YYYY-MM-DD, in the years 0001–9998',
    ...options,
  });

/**
 * What a created session holds for each optional field not sent: the one source, applied
 * by the service and shown in the OpenAPI document. `timezone` is not here: it defaults
 * to the creator's home zone.
 */
export const SESSION_DEFAULTS = {
  is_public: false,
  collaborator: [] as string[],
  status: 'waiting',
  website_blocker_enabled: false,
  website_blocker: null,
  snooze_enabled: false,
  snooze_apps: {} as Record<string, boolean>,
  is_recurring: 0,
  recurring_start: null,
  recurring_ends: null,
  occurrence: null,
  recurring_days: [] as number[],
  recurring_month_option: null,
  recurring_month_week_pos: null,
  recurring_month_week_day: null,
  fallback_option: 0,
  reminders: null,
} as const;
const REMINDERS =
  'Minutes before each occurrence starts at which everyone involved (host, collaborators, participants) gets `session.starting`: ' +
  'at most 5 distinct, 0–10,080 each. null: each person’s own (`GET /me` `reminders`).';
/** Every writable field, none required: create adds `required`, update takes any subset. */
const fields = {
  org_id: PositiveId('An organization you belong to.'),
  name: TrimmedText(200, { description: 'Session name, 1–200 characters after trimming (stored trimmed).' }),
  type: StringEnum(SESSION_TYPES),
  duration: Type.Integer({ minimum: 1, maximum: 1440, description: 'Minutes.' }),
  schedule: SessionDate({ description: 'Local date of the session (of the first occurrence for a series).' }),
  time: Type.String({
    pattern: '^(?:(?:0?[1-9]|1[0-2]):[0-5][0-9] [AaPp][Mm]|(?:[01]?[0-9]|2[0-3]):[0-5][0-9])$',
    'x-message': 'must be h:mm AM or hh:mm PM (hours 1–12), or HH:mm (hours 0–23)',
    description: 'Local start time, `h:mm AM` or `hh:mm PM`, or 24-hour `HH:mm` (`09:00`, `21:30`); returned as `h:mm AM`.',
    examples: ['9:00 AM', '21:30'],
  }),
  timezone: TimeZoneName({ description: 'IANA time zone of `schedule` and `time`. Default on create: your home zone (`GET /me`).' }),
  is_public: Type.Boolean({ default: SESSION_DEFAULTS.is_public }),
  collaborator: Type.Array(Type.String({ pattern: HANDLE_PATTERN, 'x-message': 'must be a user handle (1–64 of a-z 0-9 . _ -)' }), {
    maxItems: 100,
    default: SESSION_DEFAULTS.collaborator,
    description: 'Handles of members of the session’s org; they can see a private session.',
  }),
  status: StringEnum(STATUSES, { default: SESSION_DEFAULTS.status, description: 'Moves only forward: waiting → in_progress → completed.' }),
  website_blocker_enabled: Type.Boolean({ default: SESSION_DEFAULTS.website_blocker_enabled }),
  website_blocker: OrNull(WebsiteBlocker),
  snooze_enabled: Type.Boolean({ default: SESSION_DEFAULTS.snooze_enabled }),
  snooze_apps: Type.Record(Type.String(), Type.Boolean(), {
    maxProperties: 50,
    // TypeBox drops a string key schema's limits from the record, so state them here.
    propertyNames: { minLength: 1, maxLength: 100 },
    default: SESSION_DEFAULTS.snooze_apps,
    description: 'Notification-app name → whether snoozing applies; at most 50.',
  }),
  is_recurring: IntegerEnum([0, 1] as const, { default: SESSION_DEFAULTS.is_recurring }),
  recurring_start: OrNull(SessionDate({ description: 'First possible occurrence; default `schedule`.' })),
  recurring_ends: OrNull(SessionDate({ description: 'Last possible occurrence (inclusive); null = no end.' })),
  occurrence: OrNull(StringEnum(OCCURRENCES, { description: 'Required when is_recurring = 1.' })),
  recurring_days: Type.Array(Type.Integer({ minimum: 0, maximum: 6 }), {
    maxItems: 7,
    uniqueItems: true,
    default: SESSION_DEFAULTS.recurring_days,
    description: 'Weekly: weekdays, 0 = Sunday; empty = the start’s weekday.',
  }),
  recurring_month_option: OrNull(StringEnum(MONTH_OPTIONS)),
  recurring_month_week_pos: OrNull(IntegerEnum(WEEK_POSITIONS, { description: '1–4, or -1 for the last.' })),
  recurring_month_week_day: OrNull(Type.Integer({ minimum: 0, maximum: 6, description: '0 = Sunday.' })),
  fallback_option: IntegerEnum([0, 1] as const, { default: SESSION_DEFAULTS.fallback_option, description: '`exact` in a month without that day: 0 skip, 1 last day.' }),
  reminders: OrNull(Reminders({ description: REMINDERS }), { default: SESSION_DEFAULTS.reminders }),
};

const readOnly = ReadOnlyIgnored(READ_ONLY_FIELDS);

const optional = Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, Type.Optional(v)])) as {
  [K in keyof typeof fields]: ReturnType<typeof Type.Optional<(typeof fields)[K]>>;
};

const ONE_OFF = {
  org_id: 1,
  name: 'Deep work: quarterly report',
  type: 'standard',
  duration: 50,
  schedule: '2026-12-01',
  time: '9:00 AM',
  timezone: 'Europe/Berlin',
} as const;
const SERIES = {
  org_id: 1,
  name: 'Team focus hour',
  type: 'drop-in',
  duration: 60,
  schedule: '2026-12-01',
  time: '2:00 PM',
  timezone: 'America/New_York',
  is_public: true,
  is_recurring: 1,
  occurrence: 'weekly',
  recurring_days: [2, 4],
  recurring_ends: '2027-03-31',
  website_blocker_enabled: true,
  website_blocker: { mode: 'custom', category: ['social'], urls: ['news.ycombinator.com'] },
} as const;

export const CreateSessionBody = Named(
  'SessionCreate',
  Type.Object(
    {
      ...optional,
      org_id: fields.org_id,
      name: fields.name,
      type: fields.type,
      duration: fields.duration,
      schedule: fields.schedule,
      time: fields.time,
      ...readOnly,
    },
    { additionalProperties: false, description: 'A new session; you are its host.', examples: [ONE_OFF, SERIES] },
  ),
);
export type CreateSessionBody = Static<typeof CreateSessionBody>;

export const UpdateSessionBody = Named(
  'SessionUpdate',
  Type.Object(
    { ...optional, ...readOnly },
    {
      additionalProperties: false,
      description: 'Any subset of the create fields (at least one); the merged session must pass every create rule.',
      examples: [{ name: 'Deep work: quarterly report (final pass)', duration: 90 }, { status: 'in_progress' }],
    },
  ),
);
export type UpdateSessionBody = Static<typeof UpdateSessionBody>;

export const Participation = Named(
  'Participation',
  Type.Object(
    {
      joined: Type.Boolean(),
      role: OrNull(StringEnum(['host', 'collaborator', 'participant'] as const), { description: 'null when you neither host, collaborate on nor joined it.' }),
      joined_at: Nullable(Instant(), { description: 'When you joined (the host: when the session was created); it never changes.' }),
      completed_at: Nullable(Instant()),
    },
    { additionalProperties: false, description: 'Your part in a session (for a series: in one occurrence).' },
  ),
);
export type Participation = Static<typeof Participation>;

/** A session's website blocker as stored and answered: every list present. */
const WebsiteBlockerRecord = Named(
  'WebsiteBlocker',
  Type.Object(
    { mode: StringEnum(BLOCKER_MODES), category: Type.Array(Type.String()), urls: Type.Array(Type.String()) },
    { additionalProperties: false },
  ),
);

const STARTS = '2026-12-01T08:00:00.000Z';

/** Read-only `phase` of a record or an occurrence (contract section 10); `more` adds to its description. */
export const PhaseField = (more?: string) =>
  StringEnum(PHASES, {
    readOnly: true,
    description: `By the server’s clock when answered: \`upcoming\` before \`starts_at\`, \`running\` until \`ends_at\`, \`ended\` after${more === undefined ? '' : `; ${more}`}. Not stored: \`status\` is what people set.`,
  });

export const SessionSchema = Named(
  'Session',
  Type.Object(
    {
      id: Type.Integer({ readOnly: true }),
      org_id: Type.Integer(),
      name: Type.String(),
      type: StringEnum(SESSION_TYPES),
      duration: Type.Integer({ description: 'Minutes.' }),
      schedule: Type.String({ format: 'date' }),
      time: Type.String({ description: '`h:mm AM`.' }),
      timezone: Type.String({ description: 'IANA time zone.' }),
      is_public: Type.Boolean(),
      collaborator: Type.Array(Type.String()),
      status: StringEnum(STATUSES, { description: 'For an occurrence of a series: `completed` once its host completed it.' }),
      phase: PhaseField('a series as a whole: its next occurrence’s (`ended` when none is left)'),
      website_blocker_enabled: Type.Boolean(),
      website_blocker: Nullable(WebsiteBlockerRecord),
      snooze_enabled: Type.Boolean(),
      snooze_apps: Type.Record(Type.String(), Type.Boolean()),
      is_recurring: IntegerEnum([0, 1] as const),
      recurring_start: OrNull(Type.String({ format: 'date' })),
      recurring_ends: OrNull(Type.String({ format: 'date' })),
      occurrence: OrNull(StringEnum(OCCURRENCES)),
      recurring_days: Type.Array(Type.Integer({ minimum: 0, maximum: 6 })),
      recurring_month_option: OrNull(StringEnum(MONTH_OPTIONS)),
      recurring_month_week_pos: OrNull(IntegerEnum(WEEK_POSITIONS)),
      recurring_month_week_day: OrNull(Type.Integer({ minimum: 0, maximum: 6 })),
      fallback_option: IntegerEnum([0, 1] as const),
      reminders: OrNull(Type.Array(Type.Integer()), { description: REMINDERS }),
      created_by: Type.String({ readOnly: true, description: 'Handle of the creator (the host).' }),
      created_at: Instant({ readOnly: true }),
      updated_at: Instant({ readOnly: true }),
      starts_at: Instant({ readOnly: true, description: 'Start of this occurrence (of a series: of its first occurrence), UTC.' }),
      ends_at: Instant({ readOnly: true }),
      rrule: Nullable(Type.String(), { readOnly: true, description: 'RFC 5545 DTSTART/RRULE/EXDATE lines equivalent to the pattern; null for a one-off session.' }),
      participants_count: Type.Integer({
        readOnly: true,
        description: 'Joined users including the host; for a series, of this occurrence (or, on the series record, of the next one).',
      }),
      occurrence_date: Type.Optional(
        Type.String({ format: 'date', readOnly: true, description: 'In date-filtered listings: the local date of this item (its original day, also when an edit moved it).' }),
      ),
      split_from: Type.Optional(Type.Integer({ readOnly: true, description: 'The series a `scope=following` edit split this one from.' })),
      participation: Type.Optional(ReadOnly(Participation)),
    },
    {
      additionalProperties: false,
      description: 'A focus session, or a recurring series of them.',
      examples: [
        {
          id: 7,
          ...ONE_OFF,
          ...SESSION_DEFAULTS,
          timezone: ONE_OFF.timezone,
          created_by: 'alice',
          created_at: STARTS,
          updated_at: STARTS,
          starts_at: STARTS,
          ends_at: '2026-12-01T08:50:00.000Z',
          rrule: null,
          participants_count: 1,
          phase: 'upcoming',
        },
      ],
    },
  ),
);
export type Session = Static<typeof SessionSchema>;

