import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { Named } from '../../toolkit/openapi.js';
import { jsonResponse } from '../../toolkit/openapi.js';
import { problemResponses } from '../../toolkit/problem.schema.js';
import { Envelope, Instant } from '../../toolkit/schema-helpers.js';
import { webBase } from '../accounts/accounts.public.js';
import { OAuthError, type OAuthService } from './oauth.service.js';

const tags = ['oauth'];
const FORM = 'application/x-www-form-urlencoded';
const OAuthErrorBody = Type.Object(
  { error: Type.String(), error_description: Type.Optional(Type.String()) },
  { description: 'RFC 6749 section 5.2 / RFC 8628 section 3.5 error.' },
);
/** Every field optional in the schema: a missing one is the RFC's `invalid_request`, not a problem+json 422. */
const Form = (properties: Record<string, ReturnType<typeof Type.String>>) =>
  Type.Object(Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, Type.Optional(v)])), { additionalProperties: true });
const DeviceAuthorization = Type.Object({
    device_code: Type.String(),
    user_code: Type.String({ description: 'Eight characters shown as XXXX-XXXX for the person to type.' }),
    verification_uri: Type.String(),
    verification_uri_complete: Type.String(),
    expires_in: Type.Integer(),
    interval: Type.Integer(),
});
const TokenAnswer = Type.Object({ access_token: Type.String(), token_type: Type.Literal('Bearer'), scope: Type.String() });
const UserCodeBody = Named('UserCodeBody', Type.Object({ user_code: Type.String({ minLength: 1, maxLength: 20 }) }, { additionalProperties: false, examples: [{ user_code: 'WDJB-MJHT' }] }));
const DeviceRequest = Envelope(
  'DeviceRequest',
  Type.Object({ client_id: Type.String(), scopes: Type.Array(Type.String()), user_code: Type.String(), expires_at: Instant() }, { additionalProperties: false }),
  'The app asking, and what for.',
);

/** RFC answers: JSON errors with `error`, never problem+json; nothing here may be cached. */
async function oauthAnswer<T>(reply: FastifyReply, work: () => Promise<T>) {
  reply.header('cache-control', 'no-store');
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error;
    return reply.code(400).type('application/json').send({ error: error.code, error_description: error.description });
  }
}

/** The app's side: outside the API prefix, no token; form-encoded bodies as RFC 8628 says (JSON accepted too). */
export const oauthRoutes: FastifyPluginAsyncTypebox<{ oauth: OAuthService }> = async (app, { oauth }) => {
  app.addContentTypeParser(FORM, { parseAs: 'string' }, (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))));
  const errors = { 400: { description: 'An RFC error: `{"error": …}`.', content: { 'application/json': { schema: OAuthErrorBody } } }, ...problemResponses(413, 415, 429, 503) };
  app.post(
    '/oauth/device_authorization',
    {
      schema: {
        tags,
        operationId: 'deviceAuthorization',
        // RFC 8628's form bodies and `{"error"}` answers break the document's conventions (JSON, problem+json): docs/api.md describes them.
        hide: true,
        summary: 'Start a device authorization (RFC 8628)',
        description: '`client_id` is the app’s name; `scope` lists scopes separated by spaces. Show `user_code` and `verification_uri`, then poll /oauth/token.',
        security: [],
        body: Form({ client_id: Type.String({ examples: ['Desk Blocker'] }), scope: Type.String({ examples: ['sessions:read me:read'] }) }),
        response: { 200: { description: 'The codes.', content: { 'application/json': { schema: DeviceAuthorization } } }, ...errors },
      },
    },
    (request, reply) => oauthAnswer(reply, () => oauth.authorize(request.body as { client_id?: string; scope?: string }, webBase(request))),
  );
  app.post(
    '/oauth/token',
    {
      schema: {
        tags,
        operationId: 'deviceToken',
        hide: true,
        summary: 'Poll for the token (RFC 8628 section 3.4)',
        description: 'Answers `authorization_pending`, `slow_down` (wait 5 s more), `access_denied`, `expired_token` or `invalid_grant` as RFC 8628 section 3.5 says, then the token once.',
        security: [],
        body: Form({ grant_type: Type.String({ examples: ['urn:ietf:params:oauth:grant-type:device_code'] }), device_code: Type.String({ examples: ['…'] }) }),
        response: { 200: { description: 'The token.', content: { 'application/json': { schema: TokenAnswer } } }, ...errors },
      },
    },
    (request, reply) => oauthAnswer(reply, () => oauth.token(request.body as { grant_type?: string; device_code?: string; client_id?: string })),
  );
};

/** The person's side, under the API prefix: the web app's device page (cookie) approves or denies. */
export const deviceRoutes: FastifyPluginAsyncTypebox<{ oauth: OAuthService }> = async (app, { oauth }) => {
  const decided = { type: 'null', description: 'Done.' } as const;
  const codes = [401, 403, 404, 429, 503] as const;
  app.get(
    '/device',
    {
      schema: {
        tags,
        operationId: 'describeDeviceRequest',
        summary: 'What an app asks for, by its user code',
        description: 'A pending, unexpired request only; anything else is 404.',
        querystring: Type.Object({ user_code: Type.String({ minLength: 1, maxLength: 20 }) }, { additionalProperties: false }),
        response: { 200: jsonResponse('The request.', DeviceRequest), ...problemResponses(422, ...codes) },
      },
    },
    async (request) => ({ data: await oauth.describe(request.query.user_code) }),
  );
  for (const [path, approve] of [['/device/approve', true], ['/device/deny', false]] as const) {
    app.post(
      path,
      {
        schema: {
          tags,
          operationId: approve ? 'approveDevice' : 'denyDevice',
          summary: approve ? 'Approve an app’s device code' : 'Deny an app’s device code',
          description: approve ? 'The app’s next poll gets a token with the scopes it asked for, listed under connected apps.' : 'The app’s next poll gets `access_denied`.',
          body: UserCodeBody,
          response: { 204: decided, ...problemResponses(400, 413, 415, 422, ...codes) },
        },
      },
      async (request, reply) => {
        await oauth.decide(request.user, request.body.user_code, approve);
        return reply.code(204).send(null);
      },
    );
  }
};
