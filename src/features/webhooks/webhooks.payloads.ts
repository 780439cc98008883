import { type Static, type TSchema, Type } from 'typebox';
import { Named } from '../../toolkit/openapi.js';
import { PARTICIPATION_ACTIONS } from '../../domain/vocabulary.js';
import { Instant, OrNull, StringEnum } from '../../toolkit/schema-helpers.js';
import { SessionSchema } from '../sessions/sessions.schema.js';
import { TaskSchema } from '../tasks/tasks.schema.js';
import { MAX_PAYLOAD_BYTES, type WebhookEvent } from './webhooks.events.js';

/*
 * What each event's POST carries, for the `webhooks` section of the OpenAPI document:
 * `{type, timestamp, data}`, where data is the record as the webhook's user sees it when
 * the event is enqueued, or `{id}` when it is gone; for `session.participation`, what was
 * done, with that record.
 */

const NOW = '2026-12-01T08:00:00.000Z';
const exampleOf = (schema: TSchema): unknown => (schema as { examples?: unknown[] }).examples?.[0];
const sessionExample = exampleOf(SessionSchema);
const taskExample = exampleOf(TaskSchema);
const Timestamp = Instant({ description: 'When the event happened: the change, or the occurrence’s instant (kept when delivered late).' });
const cut = `A record over ${MAX_PAYLOAD_BYTES / 1024} KiB of JSON, or one deleted before the event was enqueued, is sent as \`{id}\` only.`;

function event<const T extends readonly WebhookEvent[]>(name: string, types: T, data: TSchema, description: string, example: unknown) {
  return Named(
    name,
    Type.Object(
      { type: StringEnum(types, { description: 'The event type.' }), timestamp: Timestamp, data },
      { additionalProperties: false, description, examples: [{ type: types[0], timestamp: NOW, data: example }] },
    ),
  );
}

const IdOnly = (description: string, example: string | number) =>
  Type.Object({ id: Type.Union([Type.Integer(), Type.String()], { description }) }, { additionalProperties: false, examples: [{ id: example }] });

const SessionEvent = event(
  'WebhookSessionEvent',
  ['session.created', 'session.updated'],
  SessionSchema,
  `A session you can see was created or changed. ${cut}`,
  sessionExample,
);
const ParticipationData = Type.Object(
  {
    action: OrNull(StringEnum(PARTICIPATION_ACTIONS), {
      description: 'What was done. Null only for a change made before the server recorded it (during an upgrade to this version).',
    }),
    occurrence_date: OrNull(Type.String({ format: 'date' }), {
      description: 'The occurrence of a series (its local date); null for a one-off session (and when `action` is null).',
    }),
    user: OrNull(Type.String(), {
      description:
        'Handle of who joined, left or completed, told only to the session’s creator and collaborators and to that user; null for everyone else ' +
        '(who joined a session is not shown to other members: they see `participants_count`).',
    }),
    session: Type.Union([SessionSchema, IdOnly('The session id.', 7)], {
      description:
        'The session as you see it, for that occurrence: a series as `GET /sessions/{id}?date=` shows it (`occurrence_date`, `starts_at`, `ends_at` ' +
        'and `participants_count` of that day), a one-off session as `GET /sessions/{id}` does. `{id}` when the session or the occurrence is gone, ' +
        `or when the record is over ${MAX_PAYLOAD_BYTES / 1024} KiB of JSON.`,
    }),
  },
  { additionalProperties: false },
);
/** The `data` of `session.participation` (built in webhooks.fanout.ts). */
export type ParticipationData = Static<typeof ParticipationData>;
const ParticipationEvent = event(
  'WebhookSessionParticipationEvent',
  ['session.participation'],
  ParticipationData,
  'Someone joined, left or completed a session you can see, or one occurrence of a series.',
  { action: 'join', occurrence_date: null, user: 'bob', session: { ...(sessionExample as object), is_public: true, participants_count: 2 } },
);
const SessionTimeEvent = event(
  'WebhookSessionTimeEvent',
  ['session.started', 'session.ended'],
  SessionSchema,
  'An occurrence of a session you created, collaborate on or joined started or ended; `data` is that occurrence.',
  sessionExample,
);
const StartingData = Type.Object(
  {
    ...SessionSchema.properties,
    minutes_before: Type.Integer({ minimum: 0, description: 'The reminder this is: how many minutes before `starts_at` it fires.' }),
  },
  { additionalProperties: false },
);
const SessionStartingEvent = event(
  'WebhookSessionStartingEvent',
  ['session.starting'],
  StartingData,
  'A reminder: an occurrence of a session you created, collaborate on or joined starts in `minutes_before` minutes; one event per offset of the ' +
    'session’s `reminders` (or, when null, of yours, `GET /me`). `data` is that occurrence.',
  { ...(sessionExample as object), minutes_before: 5 },
);
const SessionDeletedEvent = event(
  'WebhookSessionDeletedEvent',
  ['session.deleted'],
  IdOnly('The session id.', 1),
  'A session you could see was deleted, or you can no longer see it.',
  { id: 1 },
);
const TaskEvent = event('WebhookTaskEvent', ['task.created', 'task.updated'], TaskSchema, `One of your tasks was created or changed. ${cut}`, taskExample);
const TaskDeletedEvent = event('WebhookTaskDeletedEvent', ['task.deleted'], IdOnly('The task id.', '12'), 'One of your tasks was deleted.', { id: '12' });

/** Each event type: its payload schema and what it means. */
export const WEBHOOK_PAYLOADS: Record<WebhookEvent, { schema: TSchema; summary: string }> = {
  'session.created': { schema: SessionEvent, summary: 'A session you can see was created' },
  'session.updated': { schema: SessionEvent, summary: 'A session you can see was changed' },
  'session.participation': { schema: ParticipationEvent, summary: 'Someone joined, left or completed a session you can see' },
  'session.deleted': { schema: SessionDeletedEvent, summary: 'A session you could see was deleted or left your sight' },
  'session.starting': { schema: SessionStartingEvent, summary: 'A reminder: an occurrence starts in `minutes_before` minutes' },
  'session.started': { schema: SessionTimeEvent, summary: 'An occurrence started' },
  'session.ended': { schema: SessionTimeEvent, summary: 'An occurrence ended' },
  'task.created': { schema: TaskEvent, summary: 'One of your tasks was created' },
  'task.updated': { schema: TaskEvent, summary: 'One of your tasks was changed' },
  'task.deleted': { schema: TaskDeletedEvent, summary: 'One of your tasks was deleted' },
};
