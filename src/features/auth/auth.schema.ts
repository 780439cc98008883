import { type Static, Type } from 'typebox';
import { Named } from '../../toolkit/openapi.js';
import { Envelope, ReadOnlyIgnored, TimeZoneName } from '../../toolkit/schema-helpers.js';

/** Reminders (contract section 10): at most 5 distinct offsets, each 0–10,080 minutes (a week) before a session starts. */
export const MAX_REMINDERS = 5;
export const MAX_REMINDER_MINUTES = 10_080;
export const Reminders = (options: Record<string, unknown> = {}) =>
  Type.Array(Type.Integer({ minimum: 0, maximum: MAX_REMINDER_MINUTES }), { maxItems: MAX_REMINDERS, uniqueItems: true, ...options });
const HomeReminders = Reminders({
  description:
    'Minutes before a session you are involved in starts at which you get a `session.starting` event (event stream and webhooks), one per offset; ' +
    'at most 5 distinct, 0–10,080 each; `[]`: none. Default `[5]`. A session with its own `reminders` uses those instead.',
  examples: [[5], [10, 60]],
});

const HomeZone = TimeZoneName({
  description: 'Your home time zone (IANA, canonical spelling; default `UTC`): a session you create without `timezone` takes place in it.',
});

export const MeSchema = Named(
  'Me',
  Type.Object(
    {
      handle: Type.String({ readOnly: true, description: 'Your handle.' }),
      org_ids: Type.Array(Type.Integer(), { readOnly: true, description: 'The organizations you belong to.' }),
      timezone: HomeZone,
      reminders: HomeReminders,
    },
    {
      additionalProperties: false,
      description: 'The user a token belongs to.',
      examples: [{ handle: 'alice', org_ids: [1, 2], timezone: 'Europe/Berlin', reminders: [5] }],
    },
  ),
);
export type Me = Static<typeof MeSchema>;

export const MeEnvelope = Envelope('MeEnvelope', MeSchema, 'The user the token belongs to.');

/** `handle` and `org_ids` are the administrator's (the CLI's) to set: a `/me` read back and sent again is fine. */
export const UpdateMeBody = Named(
  'MeUpdate',
  Type.Object(
    { timezone: HomeZone, reminders: Type.Optional(HomeReminders), ...ReadOnlyIgnored(['handle', 'org_ids'] as const) },
    {
      additionalProperties: false,
      description: 'Changes your home time zone (sessions you already created keep theirs: none of them moves) and, when sent, your reminders.',
      examples: [{ timezone: 'Europe/Berlin' }, { timezone: 'Europe/Berlin', reminders: [10, 60] }],
    },
  ),
);
export type UpdateMeBody = Static<typeof UpdateMeBody>;
