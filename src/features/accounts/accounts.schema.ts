import { Type } from 'typebox';
import { HANDLE_PATTERN } from '../auth/auth.caller.js';
import { Named } from '../../toolkit/openapi.js';
import { Envelope, Instant, Nullable, PositiveId, StringEnum, TrimmedLabel } from '../../toolkit/schema-helpers.js';
import { PASSWORD_MAX, PASSWORD_MIN } from './accounts.passwords.js';
import { SCOPES } from './accounts.scopes.js';

const NOW = '2026-12-01T08:00:00.000Z';
const Handle = Type.String({ pattern: HANDLE_PATTERN, description: '1–64 characters of `a-z 0-9 . _ -`.' });
const Password = Type.String({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX, description: `At least ${PASSWORD_MIN} characters.` });
const Scope = StringEnum(SCOPES, { description: 'A scope: what the token may do.' });
export const Scopes = Type.Array(Scope, { minItems: 1, maxItems: SCOPES.length, uniqueItems: true });
const DataList = <T extends Parameters<typeof Type.Array>[0]>(name: string, item: T, description: string) =>
  Named(name, Type.Object({ data: Type.Array(item) }, { additionalProperties: false, description }));

export const OrgParams = Type.Object({ id: PositiveId('Org id.', { examples: [1] }) });
export const MemberParams = Type.Object({ id: PositiveId('Org id.', { examples: [1] }), handle: Handle });
export const InviteParams = Type.Object({ id: PositiveId('Org id.', { examples: [1] }), inviteId: PositiveId('Invitation id.', { examples: [3] }) });

export const LoginBody = Named(
  'LoginBody',
  Type.Object({ handle: Type.String({ maxLength: 200 }), password: Type.String({ maxLength: PASSWORD_MAX }) }, { additionalProperties: false, examples: [{ handle: 'alice', password: 'correct horse battery' }] }),
);

export const ChangePasswordBody = Named(
  'ChangePasswordBody',
  Type.Object(
    { current_password: Type.String({ maxLength: PASSWORD_MAX, description: 'Your password now.' }), new_password: Password },
    { additionalProperties: false, examples: [{ current_password: 'correct horse battery', new_password: 'staple grows tall 42' }] },
  ),
);

export const AcceptInviteBody = Named(
  'AcceptInviteBody',
  Type.Object(
    { secret: Type.String({ minLength: 1, maxLength: 200, description: 'The part of the invitation link after `#`.' }), handle: Type.Optional(Handle), password: Type.Optional(Password) },
    {
      additionalProperties: false,
      description: 'A new account (handle and password), or nothing more when signed in: then you just join the org.',
      examples: [{ secret: 'Jr0h1Vt2v3xQ8d6YpQ2nLrW9aZkF0sT4mC7eB1gH5uI', handle: 'dana', password: 'correct horse battery' }],
    },
  ),
);
export const InviteSecretParams = Type.Object({ secret: Type.String({ minLength: 1, maxLength: 200 }) });

export const AcceptedEnvelope = Envelope('AcceptedInvite', Type.Object({ handle: Type.String(), org_id: Type.Integer() }, { additionalProperties: false }), 'Who joined which org.');
export const InvitePreviewEnvelope = Envelope(
  'InvitePreview',
  Type.Object({ org_id: Type.Integer(), expires_at: Instant() }, { additionalProperties: false }),
  'The org a pending invitation is for.',
);

const InviteStatus = StringEnum(['pending', 'accepted', 'revoked', 'expired'] as const);
export const CreatedInviteEnvelope = Envelope(
  'CreatedInvite',
  Type.Object({ id: Type.Integer(), org_id: Type.Integer(), url: Type.String({ description: 'The one-time link; shown only now.' }), expires_at: Instant() }, { additionalProperties: false }),
  'The invitation, with its link (shown once).',
);
export const InviteList = DataList(
  'InviteList',
  Type.Object({ id: Type.Integer(), org_id: Type.Integer(), created_at: Instant(), expires_at: Instant(), status: InviteStatus }, { additionalProperties: false }),
  'The org’s invitations, newest first (at most 200), without their links.',
);
const RoleField = StringEnum(['admin', 'member'] as const, { description: '`admin` manages the org’s people and invitations; `member` does not.' });
const MemberRecord = Type.Object({ handle: Type.String(), role: RoleField }, { additionalProperties: false });
export const MemberList = DataList('MemberList', MemberRecord, 'The org’s members by handle.');
export const MemberEnvelope = Envelope('Member', MemberRecord, 'The member with their role now.');
export const MemberUpdateBody = Named('MemberUpdate', Type.Object({ role: RoleField }, { additionalProperties: false, examples: [{ role: 'admin' }] }));

const tokenFields = {
  id: Type.Integer(),
  name: Nullable(Type.String()),
  kind: StringEnum(['cli', 'personal'] as const, { description: '`cli`: issued by an operator (`npx focus tokens issue`); `personal`: made here.' }),
  scopes: Nullable(Type.Array(Type.String()), { description: 'null: all of your rights.' }),
  created_at: Instant(),
  expires_at: Nullable(Instant()),
  last_used_at: Nullable(Instant()),
};
export const TokenList = DataList('TokenList', Type.Object(tokenFields, { additionalProperties: false }), 'Your usable tokens, oldest first (never their secrets).');
export const CreateTokenBody = Named(
  'CreateTokenBody',
  Type.Object(
    { name: TrimmedLabel(200, { description: 'A label to recognise it by.' }), scopes: Scopes, expires_at: Type.Optional(Instant({ description: 'When it stops working; default never.' })) },
    { additionalProperties: false, examples: [{ name: 'Blocker on my laptop', scopes: ['sessions:read', 'me:read'] }] },
  ),
);
export const CreatedTokenEnvelope = Envelope(
  'CreatedToken',
  Type.Object({ ...tokenFields, token: Type.String({ description: 'The token: shown only now, stored as a hash.' }) }, { additionalProperties: false }),
  'The new token, shown once.',
);
export const AppList = DataList(
  'ConnectedAppList',
  Type.Object(
    { id: Type.Integer(), client_id: Type.String({ description: 'The app’s name.' }), scopes: Type.Array(Type.String()), created_at: Instant({ examples: [NOW] }), last_used_at: Nullable(Instant()) },
    { additionalProperties: false },
  ),
  'Apps you connected (device authorization), oldest first.',
);
