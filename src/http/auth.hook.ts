import type { FastifyInstance } from 'fastify';
import { type AuthenticatedUser, authenticate } from '../features/auth/auth.service.js';
import type { Storage } from '../storage/database.js';
import { unauthorized } from './errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook on every /api/v1 route that needs a token. */
    user: AuthenticatedUser;
  }
}

const BEARER = /^Bearer +(\S+) *$/i;

/** Resolves the bearer token on every request of the plugin it is added to; 401 otherwise. */
export function addAuthHook(app: FastifyInstance, storage: Storage): void {
  app.decorateRequest('user', null as unknown as AuthenticatedUser);
  app.addHook('onRequest', async (request) => {
    const header = request.headers.authorization;
    if (header === undefined) throw unauthorized();
    const token = BEARER.exec(header)?.[1];
    if (token === undefined) throw unauthorized('The Authorization header must be `Bearer <token>`.', true);
    const user = await authenticate(storage, token);
    if (user === undefined) throw unauthorized('The token is invalid, expired or revoked.', true);
    request.user = user;
  });
}
