import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { locationOf } from '../../toolkit/api.js';
import { jsonResponse } from '../../toolkit/openapi.js';
import { problemResponses } from '../../toolkit/problem.schema.js';
import { IdParams } from '../../toolkit/schema-helpers.js';
import {
  AppList,
  ChangePasswordBody,
  CreateTokenBody,
  CreatedInviteEnvelope,
  CreatedTokenEnvelope,
  InviteList,
  InviteParams,
  MemberEnvelope,
  MemberList,
  MemberParams,
  MemberUpdateBody,
  OrgParams,
  TokenList,
} from './accounts.schema.js';
import type { OrgsService } from './accounts.orgs.js';
import type { SigninService } from './accounts.signin.js';
import type { TokensService } from './accounts.tokens.js';
import { webBase } from './accounts.cookies.js';

const common = [401, 403, 429, 503] as const;
const deleted = { type: 'null', description: 'Done.' } as const;

type App = Parameters<FastifyPluginAsyncTypebox>[0];

/** An org's people and invitations (admins), and your own password, tokens and connected apps: under the API prefix. */
export const accountsRoutes: FastifyPluginAsyncTypebox<{ orgs: OrgsService; tokens: TokensService; signin: SigninService }> = async (app, { orgs, tokens, signin }) => {
  orgRoutes(app, orgs);
  myRoutes(app, tokens);
  app.put(
    '/me/password',
    {
      schema: {
        tags: ['sign-in'],
        operationId: 'changePassword',
        summary: 'Change your password',
        description:
          'With your current password. Your other browser sessions end; this one and your API tokens stay. A wrong current password is 422 ' +
          '(`/current_password`), and repeated ones answer 429 as failed sign-ins do. Needs a token with all rights (or the web app).',
        body: ChangePasswordBody,
        response: { 204: { type: 'null', description: 'Changed.' }, ...problemResponses(400, 413, 415, 422, ...common) },
      },
    },
    async (request, reply) => {
      await signin.changePassword(request.user, request.body, request.ip);
      return reply.code(204).send(null);
    },
  );
};

/** An org's invitations and members, for its admins. */
function orgRoutes(app: App, orgs: OrgsService): void {
  const tags = ['people'];
  app.post(
    '/orgs/:id/invites',
    {
      schema: {
        tags,
        operationId: 'createInvite',
        summary: 'Invite a person to the org (admins)',
        description: 'A one-time link, valid 7 days, shown only in this answer (only a hash is stored). Whoever opens it chooses a handle and password, or, signed in, just joins.',
        params: OrgParams,
        response: { 201: jsonResponse('The invitation and its link.', CreatedInviteEnvelope), ...problemResponses(404, 422, ...common) },
      },
    },
    async (request, reply) => {
      const invite = await orgs.createInvite(request.user, request.params.id, webBase(request));
      return reply.code(201).header('location', locationOf(`orgs/${invite.org_id}/invites`, invite.id)).send({ data: invite });
    },
  );
  app.get(
    '/orgs/:id/invites',
    {
      schema: { tags, operationId: 'listInvites', summary: 'The org’s invitations (admins)', description: 'Newest first, at most 200, each with its status (`pending`, `accepted`, `revoked`, `expired`); never the links.', params: OrgParams, response: { 200: jsonResponse('Invitations.', InviteList), ...problemResponses(404, 422, ...common) } },
    },
    async (request) => ({ data: await orgs.listInvites(request.user, request.params.id) }),
  );
  app.delete(
    '/orgs/:id/invites/:inviteId',
    {
      schema: { tags, operationId: 'revokeInvite', summary: 'Revoke a pending invitation (admins)', description: 'Its link answers 404 from now on. An invitation already accepted, revoked or unknown is 404.', params: InviteParams, response: { 204: deleted, ...problemResponses(404, 422, ...common) } },
    },
    async (request, reply) => {
      await orgs.revokeInvite(request.user, request.params.id, request.params.inviteId);
      return reply.code(204).send(null);
    },
  );
  app.get(
    '/orgs/:id/members',
    { schema: { tags, operationId: 'listMembers', summary: 'The org’s members and roles (admins)', description: 'Every member by handle with their role: `admin` (manages the org’s people) or `member`.', params: OrgParams, response: { 200: jsonResponse('Members.', MemberList), ...problemResponses(404, 422, ...common) } } },
    async (request) => ({ data: await orgs.members(request.user, request.params.id) }),
  );
  app.patch(
    '/orgs/:id/members/:handle',
    {
      schema: {
        tags,
        operationId: 'updateMember',
        summary: 'Change a member’s role (admins)',
        description: 'Takes effect on the next request, on every instance. The org’s last admin cannot be made a member (409).',
        params: MemberParams,
        body: MemberUpdateBody,
        response: { 200: jsonResponse('The member.', MemberEnvelope), ...problemResponses(400, 404, 409, 413, 415, 422, ...common) },
      },
    },
    async (request) => ({ data: await orgs.setRole(request.user, request.params.id, request.params.handle, request.body.role) }),
  );
  app.delete(
    '/orgs/:id/members/:handle',
    {
      schema: {
        tags,
        operationId: 'removeMember',
        summary: 'Remove a member from the org (admins)',
        description: 'At once, on every instance, their tokens, browser sessions, event streams, webhooks and calendar feeds lose the org. The last admin cannot be removed (409).',
        params: MemberParams,
        response: { 204: deleted, ...problemResponses(404, 409, 422, ...common) },
      },
    },
    async (request, reply) => {
      await orgs.removeMember(request.user, request.params.id, request.params.handle);
      return reply.code(204).send(null);
    },
  );
}

/** Your own tokens and connected apps. */
function myRoutes(app: App, tokens: TokensService): void {
  const mine = ['tokens'];
  app.get('/me/tokens', { schema: { tags: mine, operationId: 'listTokens', summary: 'Your tokens', description: 'Your usable CLI and personal tokens, oldest first, with their scopes (null: all your rights); never the token itself. Needs a token with all rights (or the web app).', response: { 200: jsonResponse('Tokens.', TokenList), ...problemResponses(...common) } } }, async (request) => ({
    data: await tokens.tokens(request.user),
  }));
  app.post(
    '/me/tokens',
    {
      schema: {
        tags: mine,
        operationId: 'createToken',
        summary: 'Make a personal token with scopes (shown once)', description: 'A token limited to `scopes` (see docs/api.md, "Scopes"), optionally expiring; the token is in this answer only and stored as a hash.',
        body: CreateTokenBody,
        response: { 201: jsonResponse('The token.', CreatedTokenEnvelope), ...problemResponses(400, 413, 415, 422, ...common) },
      },
    },
    async (request, reply) => {
      const token = await tokens.create(request.user, request.body);
      return reply.code(201).header('location', locationOf('me/tokens', token.id)).send({ data: token });
    },
  );
  app.delete(
    '/me/tokens/:id',
    { schema: { tags: mine, operationId: 'revokeToken', summary: 'Revoke one of your tokens', description: 'It answers 401 from now on and its event streams end. A token that is not yours is 404.', params: IdParams, response: { 204: deleted, ...problemResponses(404, 422, ...common) } } },
    async (request, reply) => {
      await tokens.revokeToken(request.user, request.params.id);
      return reply.code(204).send(null);
    },
  );
  app.get('/me/apps', { schema: { tags: mine, operationId: 'listApps', summary: 'Your connected apps', description: 'Apps you approved with a device code (OAuth 2.0 device authorization), each with its name and scopes, oldest first.', response: { 200: jsonResponse('Apps.', AppList), ...problemResponses(...common) } } }, async (request) => ({
    data: await tokens.apps(request.user),
  }));
  app.delete(
    '/me/apps/:id',
    { schema: { tags: mine, operationId: 'revokeApp', summary: 'Disconnect an app (revokes its token)', description: 'The app’s token answers 401 from now on; the app must ask again with a new device code.', params: IdParams, response: { 204: deleted, ...problemResponses(404, 422, ...common) } } },
    async (request, reply) => {
      await tokens.revokeApp(request.user, request.params.id);
      return reply.code(204).send(null);
    },
  );
}
