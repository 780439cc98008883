import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Type } from 'typebox';
import { badRequest } from '../toolkit/errors.js';
import { problemResponses } from '../toolkit/problem.schema.js';

/** The query string of a route that takes none: any parameter is an unknown field. */
const NoQuery = Type.Object({}, { additionalProperties: false });

/*
 * Query strings are well-formed and expected. A route that declares no query string takes
 * none: an unknown parameter is 422, as an unknown body field is, never silently ignored.
 * Without this, `PUT /sessions/1?scope=occurrence` answered 200 and changed the whole
 * series. Applies to the routes registered after it in the same context (the API's), which
 * also document the 422.
 */
export function installStrictQuery(app: FastifyInstance): void {
  // A query string that is not validly percent-encoded is 400, as such a path is (the
  // parser kept `%ZZ` as written and searched for it).
  app.addHook('onRequest', (request, _reply, done) => {
    const at = request.url.indexOf('?');
    if (at !== -1 && request.url.includes('%', at)) {
      try {
        decodeURIComponent(request.url.slice(at + 1));
      } catch {
        done(badRequest('The query string is not validly percent-encoded.'));
        return;
      }
    }
    done();
  });
  app.addHook('onRoute', (route) => {
    if (route.schema?.querystring !== undefined) return;
    const response = route.schema?.response as Record<string, unknown> | undefined;
    route.schema = {
      ...route.schema,
      querystring: NoQuery,
      ...(response === undefined || '422' in response ? {} : { response: { ...response, ...problemResponses(422) } }),
    };
  });
}

/** See installStrictQuery. */
export const strictQueryPlugin = fp(
  (app, _options, done) => {
    installStrictQuery(app);
    done();
  },
  { name: 'focus-strict-query' },
);
