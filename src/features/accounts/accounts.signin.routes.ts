import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { crossOrigin } from '../../toolkit/errors.js';
import { jsonResponse } from '../../toolkit/openapi.js';
import { problemResponses } from '../../toolkit/problem.schema.js';
import type { AuthService } from '../auth/auth.service.js';
import { bearerToken } from '../auth/auth.token.js';
import { COOKIE, clearSessionCookie, fromOwnOrigin, readCookie, setSessionCookie } from './accounts.cookies.js';
import { AcceptInviteBody, AcceptedEnvelope, InvitePreviewEnvelope, LoginBody } from './accounts.schema.js';
import type { InviteCaller, SigninService } from './accounts.signin.js';

const tags = ['sign-in'];

/** A browser request from another site (it says where it comes from, and that is not us): refused, so no page elsewhere signs a visitor in or out. */
function refuseForeignPages(request: FastifyRequest): void {
  const says = request.headers.origin !== undefined || request.headers['sec-fetch-site'] !== undefined;
  if (says && !fromOwnOrigin(request)) throw crossOrigin();
}

/** Who sends the request: the user the sign-in cookie or bearer token names, and which of them was sent. */
async function callerOf(auth: AuthService, request: FastifyRequest): Promise<InviteCaller> {
  const bearer = bearerToken(request.headers.authorization);
  if (bearer !== undefined) return { user: await auth.authenticate(bearer), sent: 'bearer' };
  const cookie = readCookie(request.headers.cookie, COOKIE);
  return cookie === undefined ? {} : { user: await auth.authenticate(cookie, new Date(), 'cookie'), sent: 'cookie' };
}

/** Sign-in, sign-out and invitations: outside the API prefix, no bearer token needed (contract section 12). */
export const signinRoutes: FastifyPluginAsyncTypebox<{ signin: SigninService; auth: AuthService }> = async (app, { signin, auth }) => {
  const noContent = { type: 'null', description: 'Done; the cookie is set or cleared.' } as const;
  app.post(
    '/auth/login',
    {
      schema: {
        tags,
        operationId: 'login',
        summary: 'Sign in with handle and password (sets the session cookie)',
        description:
          'One 401 whatever was wrong. Repeated failures from one address (for any handle, or for one handle) answer 429 with Retry-After for a while; ' +
          'the right password from another address still works, so nobody can be locked out.',
        security: [],
        body: LoginBody,
        response: { 204: noContent, ...problemResponses(400, 401, 403, 413, 415, 422, 429, 503) },
      },
    },
    async (request, reply) => {
      refuseForeignPages(request);
      const session = await signin.login(request.body.handle, request.body.password, request.ip);
      setSessionCookie(request, reply, session);
      return reply.code(204).send(null);
    },
  );
  app.post(
    '/auth/logout',
    { schema: { tags, operationId: 'logout', summary: 'Sign out (ends this browser session)', description: 'Ends the session of the cookie sent (at once, on every instance) and clears the cookie; without one it only clears it.', security: [], response: { 204: noContent, ...problemResponses(403, 429, 503) } } },
    async (request, reply) => {
      refuseForeignPages(request);
      const cookie = readCookie(request.headers.cookie, COOKIE);
      if (cookie !== undefined) await signin.logout(await auth.authenticate(cookie, new Date(), 'cookie'));
      clearSessionCookie(request, reply);
      return reply.code(204).send(null);
    },
  );
  app.post(
    '/auth/invites/preview',
    {
      schema: {
        tags,
        operationId: 'previewInvite',
        summary: 'What a pending invitation is for',
        description: 'The secret travels in the body, never in a URL that logs keep. Unknown, used, revoked and expired invitations are one 404.',
        security: [],
        body: AcceptInviteBody,
        response: { 200: jsonResponse('The invitation.', InvitePreviewEnvelope), ...problemResponses(400, 404, 413, 415, 422, 429, 503) },
      },
    },
    async (request) => ({ data: await signin.preview(request.body.secret) }),
  );
  app.post(
    '/auth/invites/accept',
    {
      schema: {
        tags,
        operationId: 'acceptInvite',
        summary: 'Accept an invitation',
        description:
          'With `handle` and `password`: creates your account, joins the org and signs you in (sets the cookie). Signed in (cookie or bearer token) without them: you just join. ' +
          'Each link works once; a handle already taken is 422; unknown, used, revoked and expired invitations are one 404; ' +
          'a cookie or token that no longer signs anyone in, sent without `handle` and `password`, is 401.',
        security: [],
        body: AcceptInviteBody,
        response: { 200: jsonResponse('Joined.', AcceptedEnvelope), ...problemResponses(400, 401, 403, 404, 413, 415, 422, 429, 503) },
      },
    },
    async (request, reply) => {
      refuseForeignPages(request);
      const { result, session } = await signin.accept(request.body, await callerOf(auth, request));
      if (session !== undefined) setSessionCookie(request, reply, session);
      return { data: result };
    },
  );
};
