import { type Static, Type } from 'typebox';
import { Named } from '../../toolkit/openapi.js';
import { Envelope, ReadOnlyIgnored, TimeZoneName } from '../../toolkit/schema-helpers.js';

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
    },
    { additionalProperties: false, description: 'The user a token belongs to.', examples: [{ handle: 'alice', org_ids: [1, 2], timezone: 'Europe/Berlin' }] },
  ),
);
export type Me = Static<typeof MeSchema>;

export const MeEnvelope = Envelope('MeEnvelope', MeSchema, 'The user the token belongs to.');

/** `handle` and `org_ids` are the administrator's (the CLI's) to set: a `/me` read back and sent again is fine. */
export const UpdateMeBody = Named(
  'MeUpdate',
  Type.Object(
    { timezone: HomeZone, ...ReadOnlyIgnored(['handle', 'org_ids'] as const) },
    {
      additionalProperties: false,
      description: 'Changes your home time zone. Sessions you already created keep theirs: none of them moves.',
      examples: [{ timezone: 'Europe/Berlin' }],
    },
  ),
);
export type UpdateMeBody = Static<typeof UpdateMeBody>;
