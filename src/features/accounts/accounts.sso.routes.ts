import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { notFound } from '../../toolkit/errors.js';
import { jsonResponse } from '../../toolkit/openapi.js';
import { problemResponses } from '../../toolkit/problem.schema.js';
import { Envelope } from '../../toolkit/schema-helpers.js';
import { basePath, cookieOf, readCookie, setSessionCookie, webBase } from './accounts.cookies.js';
import type { SigninService } from './accounts.signin.js';
import { type SsoClient, SsoRefused } from './accounts.sso.js';

const tags = ['sign-in'];
/** The browser's half of an attempt: its state, sent back only to the callback. */
const ATTEMPT_COOKIE = 'focus_oidc';
const PATH = '/auth/oidc';
/** Where a refused or failed sign-on lands (below the base path): the sign-in page, which says so in general terms. */
const FAILED = '/sign-in?error=sso';

const SsoStatus = Envelope('SingleSignOn', Type.Object({ enabled: Type.Literal(true) }, { additionalProperties: false }), 'Single sign-on is offered.');
const StartQuery = Type.Object(
  { invite: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The secret of an invitation to accept with the account the provider vouches for.' })) },
  { additionalProperties: false },
);
const redirect = (description: string) => ({ type: 'null', description } as const);

/**
 * The attempt cookie: SameSite=Lax (sent on the provider's top-level redirect back), scoped
 * to these routes where the browser sees them (PUBLIC_URL may carry a path), 10 minutes.
 */
const attemptCookie = (request: FastifyRequest, value: string, maxAgeS: number) => cookieOf(request, { name: ATTEMPT_COOKIE, value, path: `${basePath(request)}${PATH}`, maxAgeS });

/** Back to the sign-in page. A refusal is the person's business (info); anything else may be ours to fix, so its error is logged whole. */
function failed(request: FastifyRequest, reply: FastifyReply, error: unknown): FastifyReply {
  if (error instanceof SsoRefused) request.log.info({ reason: error.message }, 'single sign-on refused');
  else request.log.warn({ err: error }, 'single sign-on failed');
  reply.header('set-cookie', attemptCookie(request, '', 0));
  return reply.redirect(`${basePath(request)}${FAILED}`, 302);
}

const SCHEMAS = {
  status: {
    tags,
    operationId: 'singleSignOnStatus',
    summary: 'Whether single sign-on is offered',
    description: '200 when the server is configured for an OpenID Connect provider, else 404: the sign-in page shows its link only then.',
    security: [],
    response: { 200: jsonResponse('Offered.', SsoStatus), ...problemResponses(404, 429, 503) },
  },
  start: {
    tags,
    operationId: 'startSingleSignOn',
    summary: 'Leave for the provider (a browser navigation)',
    description:
      "302 to the provider's authorization endpoint (code flow, PKCE S256, state and nonce), with a short-lived cookie holding this browser's state. " +
      'With `invite`, the account the provider vouches for accepts that invitation. When the provider cannot be reached: 302 to `/sign-in?error=sso`.',
    security: [],
    querystring: StartQuery,
    response: { 302: redirect('To the provider, or back to the sign-in page.'), ...problemResponses(400, 404, 422, 429, 503) },
  },
  callback: {
    tags,
    operationId: 'finishSingleSignOn',
    summary: 'Where the provider sends the browser back',
    description:
      'Checks the state against the browser’s cookie, exchanges the code (with the PKCE verifier), verifies the ID token (signature, issuer, audience, nonce) and needs a verified email. ' +
      'The user an operator gave that email, or a new user through the invitation the attempt carried, is signed in (the same cookie as `POST /auth/login`) and sent to `/`. ' +
      'Anything else: 302 to `/sign-in?error=sso`, nothing created, the reason only in the log.',
    security: [],
    response: { 302: redirect('To the web app, signed in; or back to the sign-in page.'), ...problemResponses(404, 429, 503) },
  },
} as const;

/**
 * Single sign-on with an OpenID Connect provider (contract section 12). Without
 * OIDC_ISSUER and its client, every route answers 404 like any unknown path.
 */
export const ssoRoutes: FastifyPluginAsyncTypebox<{ sso: SsoClient | undefined; signin: SigninService }> = async (app, { sso, signin }) => {
  // Before validation too: an unconfigured server answers these paths exactly like unknown ones.
  app.addHook('onRequest', async () => {
    if (sso === undefined) throw notFound('route');
  });
  const enabled = (): SsoClient => {
    if (sso === undefined) throw notFound('route');
    return sso;
  };
  app.get(PATH, { schema: SCHEMAS.status }, async () => {
    enabled();
    return { data: { enabled: true as const } };
  });
  app.get(`${PATH}/start`, { schema: SCHEMAS.start }, async (request, reply) => {
    const client = enabled();
    try {
      const { url, state } = await client.start(`${webBase(request)}${PATH}/callback`, request.query.invite);
      reply.header('set-cookie', attemptCookie(request, state, 600));
      return await reply.redirect(url, 302);
    } catch (error) {
      return failed(request, reply, error);
    }
  });
  app.get(`${PATH}/callback`, { schema: SCHEMAS.callback }, async (request, reply) => {
    const client = enabled();
    try {
      // The URL the provider redirected to, as registered (PUBLIC_URL may carry a path), with the query it added.
      const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
      const identity = await client.finish(new URL(`${webBase(request)}${PATH}/callback${query}`), readCookie(request.headers.cookie, ATTEMPT_COOKIE));
      const session = await signin.signInWithSso(identity);
      if (session === undefined) return failed(request, reply, new SsoRefused('no user has this email, and no pending invitation came with it'));
      reply.header('set-cookie', attemptCookie(request, '', 0));
      setSessionCookie(request, reply, session);
      return await reply.redirect(`${basePath(request)}/`, 302);
    } catch (error) {
      return failed(request, reply, error);
    }
  });
};
