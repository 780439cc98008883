import { type Static, Type } from 'typebox';
import { SESSION_TYPES, STATUSES } from '../../domain/vocabulary.js';
import { Named } from '../../toolkit/openapi.js';
import { Cursor, Envelope, Instant, IntegerEnum, Limit, OrNull, Page, PositiveId, StringEnum } from '../../toolkit/schema-helpers.js';
import { Participation, PhaseField, SessionDate, SessionSchema } from './sessions.schema.js';

/* The query strings and response envelopes of the sessions routes (the record itself: sessions.schema.ts). */

export const ListSessionsQuery = Type.Object(
  {
    org_id: Type.Optional(PositiveId('One of your orgs; default all of them.')),
    channel: Type.Optional(StringEnum(['public', 'private'] as const)),
    type: Type.Optional(StringEnum(SESSION_TYPES)),
    date: Type.Optional(SessionDate({ description: 'Sessions taking place that local day; recurring ones once per occurrence.' })),
    completed: Type.Optional(IntegerEnum([0, 1] as const, { description: '0 = not completed, 1 = completed.' })),
    source: Type.Optional(
      StringEnum(['user', 'organization'] as const, {
        description: '`user`: created, collaborating or joined; `organization`: every visible session.',
      }),
    ),
    keyword: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Case-insensitive substring of the name; `%` and `_` are literal.' })),
    day_start: Type.Optional(SessionDate({ description: 'First local day of the range (inclusive).' })),
    day_ends: Type.Optional(SessionDate({ description: 'Last local day (inclusive); at most 366 days after day_start. Default day_start + 365.' })),
    limit: Type.Optional(Limit(500, 100)),
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false },
);
export type ListSessionsQuery = Static<typeof ListSessionsQuery>;

export const GetSessionQuery = Type.Object(
  { date: Type.Optional(SessionDate({ description: 'For a series: the occurrence whose participation to show (default: the next one).' })) },
  { additionalProperties: false },
);

export const UpdateSessionQuery = Type.Object(
  {
    date: Type.Optional(SessionDate({ description: 'An occurrence of a series: change only it (or with `scope=following`, it and the ones after).' })),
    scope: Type.Optional(
      StringEnum(['series', 'occurrence', 'following'] as const, {
        description: '`series` (the default without `date`) edits the whole session; with `date`, `occurrence` (its default) edits that day only and `following` splits the series there into a new one.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type UpdateSessionQuery = Static<typeof UpdateSessionQuery>;

export const DeleteSessionQuery = Type.Object(
  {
    scope: Type.Optional(StringEnum(['series', 'occurrence', 'following'] as const, { default: 'series' })),
    date: Type.Optional(SessionDate({ description: 'The occurrence (default: the next one on or after today, in the session’s time zone).' })),
  },
  { additionalProperties: false },
);
export type DeleteSessionQuery = Static<typeof DeleteSessionQuery>;

export const OccurrencesQuery = Type.Object(
  {
    from: SessionDate({ examples: ['2026-12-01'] }),
    to: SessionDate({ description: 'Inclusive; at most 366 days after `from`.', examples: ['2026-12-31'] }),
  },
  { additionalProperties: false },
);

export const ParticipationQuery = Type.Object(
  { date: Type.Optional(SessionDate({ description: 'For a series: the occurrence (default: the next one on or after today).' })) },
  { additionalProperties: false },
);

export const SessionEnvelope = Envelope('SessionEnvelope', SessionSchema, 'One session.');
export const SessionList = Page('SessionList', SessionSchema, 'A page of sessions, by `starts_at`, then `id`.');
const Occurrence = Named(
  'Occurrence',
  Type.Object(
    { occurrence_date: Type.String({ format: 'date' }), starts_at: Instant(), ends_at: Instant(), phase: PhaseField() },
    { additionalProperties: false, description: 'One occurrence of a session: its local date and instants.' },
  ),
);
export const OccurrenceList = Named(
  'OccurrenceList',
  Type.Object({ data: Type.Array(Occurrence) }, { additionalProperties: false, description: 'The occurrences in the range, in order (no paging: the range is bounded).' }),
);
export const ParticipationEnvelope = Envelope(
  'ParticipationEnvelope',
  Named(
    'ParticipationResult',
    Type.Object(
      {
        session_id: Type.Integer(),
        occurrence_date: OrNull(Type.String({ format: 'date' }), { description: 'The occurrence (of a series); null for a one-off session.' }),
        participation: Participation,
        status: StringEnum(STATUSES, { description: 'The session’s (or the occurrence’s) status afterwards.' }),
      },
      { additionalProperties: false },
    ),
  ),
  'Your participation after the change.',
);
