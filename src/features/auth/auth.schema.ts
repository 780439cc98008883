import { type Static, Type } from 'typebox';
import { ReadOnlyIgnored, TimeZoneName } from '../../toolkit/schema-helpers.js';

const HomeZone = TimeZoneName({
  description: 'Your home time zone (IANA, canonical spelling; default `UTC`): a session you create without `timezone` takes place in it.',
});

export const MeSchema = Type.Object(
  {
    handle: Type.String(),
    org_ids: Type.Array(Type.Integer()),
    timezone: HomeZone,
  },
  { additionalProperties: false },
);
export type Me = Static<typeof MeSchema>;

export const MeEnvelope = Type.Object({ data: MeSchema });

/** `handle` and `org_ids` are the administrator's (the CLI's) to set: a `/me` read back and sent again is fine. */
export const UpdateMeBody = Type.Object(
  { timezone: HomeZone, ...ReadOnlyIgnored(['handle', 'org_ids'] as const) },
  {
    title: 'UpdateMe',
    additionalProperties: false,
    description: 'Changes your home time zone. Sessions you already created keep theirs: none of them moves.',
  },
);
export type UpdateMeBody = Static<typeof UpdateMeBody>;
