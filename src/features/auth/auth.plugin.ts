import type { FastifyReply, FastifyRequest, FastifySchema, RouteOptions } from 'fastify';
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

export interface AuthPluginOptions {
  auth: AuthService;
  /** A credential other than a bearer token (the sign-in cookie), tried when the request has no Authorization header. */
  otherCredential?: (request: FastifyRequest, reply: FastifyReply) => Promise<AuthenticatedUser | undefined>;
  /** Made once per route: what an authenticated request must further satisfy there (its scopes); throws to refuse. */
  routeCheck?: (route: RouteOptions) => (request: FastifyRequest) => void;
}

/**
 * Every route under the API prefix needs a bearer token (or the other credential) unless its
 * schema declares `security: []`. The check is added to each such route as it is registered
 * (so register this before the routes); as a route hook it runs after every instance hook,
 * that is after the rate limiter has checked the client address.
 */
export const authPlugin = fp<AuthPluginOptions>(
  (app, { auth, otherCredential, routeCheck }, done) => {
    app.decorateRequest('user', null as unknown as AuthenticatedUser);
    app.addHook('onRoute', (route) => {
      if (!route.url.startsWith(API_PREFIX) || isPublic(route.schema)) return;
      const check = routeCheck?.(route);
      const guard = async (request: FastifyRequest, reply: FastifyReply) => {
        const header = request.headers.authorization;
        const token = bearerToken(header);
        let user: AuthenticatedUser | undefined;
        if (token !== undefined) user = await auth.authenticate(token);
        else if (header === undefined && otherCredential !== undefined) user = await otherCredential(request, reply);
        if (user === undefined) throw unauthorized(presentsBearerToken(header));
        request.user = user;
        check?.(request);
      };
      route.onRequest = [...[route.onRequest ?? []].flat(), guard];
    });
    done();
  },
  { name: 'focus-auth' },
);
