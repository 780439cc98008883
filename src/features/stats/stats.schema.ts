import { type Static, Type } from 'typebox';
import { Named } from '../../toolkit/openapi.js';
import { CalendarDate, Envelope, StringEnum } from '../../toolkit/schema-helpers.js';

/** The longest range one request may ask for, in local days (inclusive). */
export const MAX_STATS_DAYS = 366;
/** The default range: this many local days ending today. */
export const DEFAULT_STATS_DAYS = 28;
export const GROUPS = ['day', 'week', 'month'] as const;
export type Group = (typeof GROUPS)[number];

const StatsDate = (description: string) =>
  CalendarDate({ pattern: '^(?!0000-|9999-)\\d{4}-\\d{2}-\\d{2}$', 'x-message': 'must be a real calendar date, YYYY-MM-DD, in the years 0001–9998', description });

export const StatsQuery = Type.Object(
  {
    from: Type.Optional(StatsDate(`First local day (inclusive) in your home zone; default ${DEFAULT_STATS_DAYS - 1} days before \`to\`.`)),
    to: Type.Optional(StatsDate(`Last local day (inclusive); default today in your home zone. At most ${MAX_STATS_DAYS} days from \`from\`.`)),
    group: Type.Optional(StringEnum(GROUPS, { default: 'day', description: 'One bucket per local day, per week (Monday to Sunday) or per calendar month.' })),
  },
  { additionalProperties: false },
);
export type StatsQuery = Static<typeof StatsQuery>;

const Count = (description: string) => Type.Integer({ minimum: 0, description });
const countFields = {
  focused_minutes: Count('Minutes of the occurrences completed (their durations).'),
  sessions_completed: Count('Occurrences completed (as host or participant), by their local start day.'),
  sessions_joined: Count('Occurrences joined (a host’s completed own ones included), by their local start day.'),
  tasks_completed: Count('Tasks whose completion happened in the period.'),
};
const activeMembers = Count('Members with anything counted in the period (a session joined or completed, or a task completed).');
const start = CalendarDate({ description: 'The period’s first local day: the day, the Monday of the week, or the first of the month (which may precede `from`; only days from `from` to `to` are counted).' });

export const StatsCounts = Named('StatsCounts', Type.Object(countFields, { additionalProperties: false, description: 'The range as a whole.' }));
export const StatsBucket = Named('StatsBucket', Type.Object({ start, ...countFields }, { additionalProperties: false, description: 'One period of the range.' }));
export const OrgStatsCounts = Named(
  'OrgStatsCounts',
  Type.Object({ ...countFields, active_members: activeMembers }, { additionalProperties: false, description: 'The range as a whole, summed over the members.' }),
);
export const OrgStatsBucket = Named(
  'OrgStatsBucket',
  Type.Object({ start, ...countFields, active_members: activeMembers }, { additionalProperties: false, description: 'One period, summed over the members.' }),
);
export type StatsCounts = Static<typeof StatsCounts>;
export type StatsBucket = Static<typeof StatsBucket>;
export type OrgStatsBucket = Static<typeof OrgStatsBucket>;

const counts = { focused_minutes: 100, sessions_completed: 2, sessions_joined: 3, tasks_completed: 4 };

export const StatsSchema = Named(
  'Stats',
  Type.Object(
    {
      buckets: Type.Array(StatsBucket, { description: 'One per period of the range, in order, zeros included.' }),
      totals: StatsCounts,
      current_streak_days: Count('Consecutive local days, up to today, with at least one occurrence completed; today is still open, so a run that reached yesterday counts.'),
      longest_streak_days: Count('The longest such run over all time.'),
    },
    { additionalProperties: false, description: 'Your focus statistics, in your home zone.', examples: [{ buckets: [{ start: '2026-11-23', ...counts }], totals: counts, current_streak_days: 3, longest_streak_days: 12 }] },
  ),
);
export const OrgStatsSchema = Named(
  'OrgStats',
  Type.Object(
    {
      buckets: Type.Array(OrgStatsBucket, { description: 'One per period of the range, in order, zeros included.' }),
      totals: OrgStatsCounts,
    },
    { additionalProperties: false, description: 'The org’s focus statistics: its members’ summed, in your home zone; no per-member breakdown and no streaks (a streak is a person’s).' },
  ),
);
export type Stats = Static<typeof StatsSchema>;
export type OrgStats = Static<typeof OrgStatsSchema>;

export const StatsEnvelope = Envelope('StatsEnvelope', StatsSchema, 'Your focus statistics.');
export const OrgStatsEnvelope = Envelope('OrgStatsEnvelope', OrgStatsSchema, 'The org’s focus statistics.');
