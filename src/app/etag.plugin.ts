import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { etagOf, noneMatch } from '../toolkit/entity-tags.js';
import { problems } from '../toolkit/problem.schema.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route answers one record: its 200/201 responses carry an ETag, and a GET honours If-None-Match. */
    etag?: boolean;
    /** The route (PUT or DELETE of one record) honours If-Match: its handler hands `ifMatchOf(…)` to the service. */
    ifMatch?: boolean;
  }
}

/*
 * Strong ETags (contract section 7), computed by `etagOf` over the exact body a response
 * carries (see toolkit/entity-tags.ts). A session's body holds the caller's own
 * `participation`, so two users get two tags for one session: each is the tag of the
 * representation that caller gets. POST and PUT answer the record as GET would, with the
 * same tag. If-Match is compared by the services, inside the write transaction.
 */

const ETAG_HEADER = { ETag: { type: 'string', description: 'Strong entity tag of this body (a hash of its bytes).' } } as const;

function addHeader(schema: NonNullable<RouteOptions['schema']>, name: string, description: string): void {
  const headers = (schema.headers ?? { type: 'object', properties: {} }) as { properties?: Record<string, unknown> };
  schema.headers = { ...headers, type: 'object', properties: { ...headers.properties, [name]: { type: 'string', description } } };
}

/** Adds what the ETag and If-Match rules do to a route's OpenAPI description. */
function describe(route: RouteOptions): void {
  const schema = (route.schema ??= {});
  const responses = (schema.response ?? {}) as Record<string, Record<string, unknown>>;
  const etag = route.config?.etag === true;
  for (const code of etag ? ['200', '201'] : []) {
    const response = responses[code];
    // A new object: the response schemas are shared between routes.
    if (response !== undefined) responses[code] = { ...response, headers: { ...(response.headers as object | undefined), ...ETAG_HEADER } };
  }
  if (etag && [route.method].flat().includes('GET')) {
    addHeader(schema, 'if-none-match', 'ETags from earlier answers (or `*`); when one is current the answer is 304 with no body.');
    responses['304'] = { type: 'null', description: 'Not modified: an ETag in If-None-Match is current. No body.', headers: ETAG_HEADER };
  }
  if (route.config?.ifMatch === true) {
    addHeader(
      schema,
      'if-match',
      'Change the record only if it is unchanged: the ETag of your last GET (or `*`, any existing record). ' +
        'When none of the listed tags is current the answer is 412 `precondition-failed` and nothing is changed; ' +
        'weak tags (`W/…`) never match. Without If-Match the write proceeds.',
    );
    responses['412'] = problems[412];
  }
  schema.response = responses;
}

function tagged(request: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
  if (reply.routeOptions.config.etag !== true || (reply.statusCode !== 200 && reply.statusCode !== 201)) return payload;
  if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
  // A route that keeps its body with its tag (a calendar feed) sets it; any other body is hashed here.
  const set = reply.getHeader('etag');
  const tag = typeof set === 'string' ? set : etagOf(payload);
  reply.header('etag', tag);
  if ((request.method === 'GET' || request.method === 'HEAD') && !noneMatch(request.headers['if-none-match'], tag)) {
    reply.code(304).removeHeader('content-type');
    return null;
  }
  return payload;
}

/** Registers the ETag rules for every route whose config has `etag: true` (and documents `ifMatch: true`); register before the routes. */
export const etagPlugin = fp(
  (app: FastifyInstance, _options: object, done: (error?: Error) => void) => {
    app.addHook('onRoute', (route) => {
      if (route.config?.etag === true || route.config?.ifMatch === true) describe(route);
    });
    app.addHook('onSend', (request, reply, payload, next) => next(null, tagged(request, reply, payload)));
    done();
  },
  { name: 'focus-etag', fastify: '5.x' },
);
