import { type Static, Type } from 'typebox';
import { Named } from '../../toolkit/openapi.js';
import { Cursor, Instant } from '../../toolkit/schema-helpers.js';

export const EventsQuery = Type.Object(
  { cursor: Type.Optional({ ...Cursor, description: 'Where to resume: a `next_cursor` of `GET /changes` (after its full sync) or an event `id`. `Last-Event-ID` wins.' }) },
  { additionalProperties: false },
);
export type EventsQuery = Static<typeof EventsQuery>;

export const EventsHeaders = Type.Object({
  'last-event-id': Type.Optional({ ...Cursor, description: 'The `id` of the last `change` event received: the stream resumes after it.' }),
});

export const SessionTimeEvent = Named(
  'SessionTimeEvent',
  Type.Object(
    {
      session_id: Type.Integer(),
      occurrence_date: Type.String({ format: 'date', description: 'The local date of the occurrence.' }),
      starts_at: Instant(),
      ends_at: Instant(),
      minutes_before: Type.Optional(Type.Integer({ minimum: 0, description: 'In `session.starting` only: the reminder, in minutes before `starts_at`.' })),
    },
    {
      additionalProperties: false,
      description: 'The `data` of a `session.starting`, `session.started` or `session.ended` event.',
      examples: [{ session_id: 7, occurrence_date: '2026-12-01', starts_at: '2026-12-01T08:00:00.000Z', ends_at: '2026-12-01T08:50:00.000Z' }],
    },
  ),
);

const EXAMPLE =
  'retry: 2000\n\n' +
  'event: change\nid: WzQzLDIsIiIsMCwxNzY0NTc2MDAwMDAwXQ\n' +
  'data: {"type":"task","id":"12","deleted":true,"record":null,"changed_at":"2026-12-01T08:00:00.000Z"}\n\n' +
  'event: session.starting\ndata: {"session_id":7,"occurrence_date":"2026-12-01","starts_at":"2026-12-01T08:00:00.000Z","ends_at":"2026-12-01T08:50:00.000Z","minutes_before":5}\n\n' +
  'event: session.started\ndata: {"session_id":7,"occurrence_date":"2026-12-01","starts_at":"2026-12-01T08:00:00.000Z","ends_at":"2026-12-01T08:50:00.000Z"}\n\n' +
  ': keep-alive\n\n';

export const EventStream = Named(
  'EventStream',
  Type.String({
    description:
      'A `text/event-stream` (server-sent events) that stays open. `event: change`: `data` is a `ChangeEntry` (JSON), `id` the cursor after it. ' +
      '`event: session.starting` (one per reminder) / `session.started` / `session.ended`: `data` is a `SessionTimeEvent`, no `id`. Lines starting with `:` are keep-alive comments.',
    examples: [EXAMPLE],
  }),
);
