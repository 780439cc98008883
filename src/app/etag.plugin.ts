import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route answers one record: its 200/201 responses carry an ETag, and a GET honours If-None-Match. */
    etag?: boolean;
  }
}

/*
 * Strong ETags (contract section 7). The tag is a hash of the exact body a response
 * carries, so it is byte-for-byte strong, identical on every instance, and changes
 * whenever anything in that body changes (a join changes `participants_count`, so the
 * session's tag). A session's body holds the caller's own `participation`, so two users
 * get two tags for one session: each is the tag of the representation that caller gets.
 * POST and PUT answer the record as GET would, with the same tag.
 */

export const etagOf = (body: string | Buffer) => `"${createHash('sha256').update(body).digest('base64url')}"`;

/** RFC 9110 If-None-Match: `*`, or a list of tags compared weakly (a `W/` prefix is ignored). */
export function noneMatch(header: string | undefined, tag: string): boolean {
  if (header === undefined) return true;
  const listed = header.split(',').map((t) => t.trim().replace(/^W\//, ''));
  return !listed.some((t) => t === '*' || t === tag);
}

const ETAG_HEADER = { ETag: { type: 'string', description: 'Strong entity tag of this body (a hash of its bytes).' } } as const;

/** Adds what the ETag rules do to a route's OpenAPI description. */
function describe(route: RouteOptions): void {
  const schema = (route.schema ??= {});
  const responses = (schema.response ?? {}) as Record<string, Record<string, unknown>>;
  for (const code of ['200', '201']) {
    const response = responses[code];
    // A new object: the response schemas are shared between routes.
    if (response !== undefined) responses[code] = { ...response, headers: { ...(response.headers as object | undefined), ...ETAG_HEADER } };
  }
  const methods = [route.method].flat();
  if (methods.includes('GET')) {
    schema.headers = {
      type: 'object',
      properties: {
        'if-none-match': {
          type: 'string',
          description: 'ETags from earlier answers (or `*`); when one is current the answer is 304 with no body.',
        },
      },
    };
    responses['304'] = { type: 'null', description: 'Not modified: an ETag in If-None-Match is current. No body.', headers: ETAG_HEADER };
  }
  schema.response = responses;
}

function tagged(request: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
  if (reply.routeOptions.config.etag !== true || (reply.statusCode !== 200 && reply.statusCode !== 201)) return payload;
  if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
  const tag = etagOf(payload);
  reply.header('etag', tag);
  if ((request.method === 'GET' || request.method === 'HEAD') && !noneMatch(request.headers['if-none-match'], tag)) {
    reply.code(304).removeHeader('content-type');
    return null;
  }
  return payload;
}

/** Registers the ETag rules for every route whose config has `etag: true`; register before the routes. */
export const etagPlugin = fp(
  (app: FastifyInstance, _options: object, done: (error?: Error) => void) => {
    app.addHook('onRoute', (route) => {
      if (route.config?.etag === true) describe(route);
    });
    app.addHook('onSend', (request, reply, payload, next) => next(null, tagged(request, reply, payload)));
    done();
  },
  { name: 'focus-etag', fastify: '5.x' },
);
