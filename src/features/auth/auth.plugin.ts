import type { FastifySchema } from 'fastify';
import fp from 'fastify-plugin';
import { API_PREFIX } from '../../toolkit/api.js';
import { unauthorized } from '../../toolkit/errors.js';
import type { AuthenticatedUser } from './auth.caller.js';
import type { AuthService } from './auth.service.js';
import { bearerToken, presentsBearerToken } from './auth.token.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller, on every route the auth plugin guards. */
    user: AuthenticatedUser;
  }
}

/** A route that declares `security: []` in its schema is public, and the OpenAPI document says so too. */
const isPublic = (schema: FastifySchema | undefined) => Array.isArray((schema as { security?: unknown } | undefined)?.security) &&
  (schema as { security: unknown[] }).security.length === 0;

/**
 * Every route under the API prefix needs a bearer token unless its schema declares
 * `security: []`. The check is added to each such route as it is registered (so register
 * this before the routes); as a route hook it runs after every instance hook, that is
 * after the rate limiter has checked the client address.
 */
export const authPlugin = fp<{ auth: AuthService }>(
  (app, { auth }, done) => {
    app.decorateRequest('user', null as unknown as AuthenticatedUser);
    app.addHook('onRoute', (route) => {
      if (!route.url.startsWith(API_PREFIX) || isPublic(route.schema)) return;
      const guard = async (request: { headers: { authorization?: string }; user: AuthenticatedUser }) => {
        const header = request.headers.authorization;
        const token = bearerToken(header);
        const user = token === undefined ? undefined : await auth.authenticate(token);
        if (user === undefined) throw unauthorized(presentsBearerToken(header));
        request.user = user;
      };
      route.onRequest = [...[route.onRequest ?? []].flat(), guard];
    });
    done();
  },
  { name: 'focus-auth' },
);
