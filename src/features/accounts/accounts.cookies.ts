import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { type AuthService, SESSION_LIFETIME_MS } from '../auth/auth.service.js';
import { crossOrigin } from '../../toolkit/errors.js';

/** The sign-in cookie's name; its value is a session credential, stored only as a hash. */
export const COOKIE = 'focus_session';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The value of cookie `name` in a Cookie header, or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Where our pages come from: PUBLIC_URL's origin when set, else the scheme and Host the request came with. */
function ownOrigin(request: FastifyRequest): string {
  const configured = request.server.publicUrl;
  return configured === null || configured === undefined ? `${request.protocol}://${request.host}` : new URL(configured).origin;
}

/**
 * A Set-Cookie value of ours: HttpOnly (no script reads it), SameSite=Lax, Secure when
 * PUBLIC_URL is https; Max-Age 0 clears it. `path` is below the web app's base path.
 */
export function cookieOf(request: FastifyRequest, q: { name: string; value: string; path: string; maxAgeS: number }): string {
  const secure = request.server.publicUrl?.startsWith('https:') === true ? ['Secure'] : [];
  return [`${q.name}=${q.value}`, `Path=${q.path}`, 'HttpOnly', 'SameSite=Lax', `Max-Age=${q.maxAgeS}`, ...secure].join('; ');
}

/** The path the web app is served under: PUBLIC_URL's (without its last slash), else none. */
export function basePath(request: FastifyRequest): string {
  return new URL(webBase(request)).pathname.replace(/\/+$/, '');
}

/** Set-Cookie for a session, 30 days. */
export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, value: string): void {
  reply.header('set-cookie', cookieOf(request, { name: COOKIE, value, path: '/', maxAgeS: SESSION_LIFETIME_MS / 1000 }));
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('set-cookie', cookieOf(request, { name: COOKIE, value: '', path: '/', maxAgeS: 0 }));
}

/**
 * Whether the request comes from this server's own pages: `Sec-Fetch-Site: same-origin`
 * when the browser sends it (every current one does), else an `Origin` equal to ours.
 * Neither header: not from a page of ours (browsers send Origin with every such change).
 */
export function fromOwnOrigin(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== ownOrigin(request)) return false;
  if (site !== undefined) return site === 'same-origin';
  return origin !== undefined;
}

/**
 * The auth plugin's other credential: the sign-in cookie. A change (any method but GET,
 * HEAD, OPTIONS) made with it must come from our own origin, else 403 `cross-origin`:
 * the CSRF rule of contract section 12. The cookie is sent again with each answer, so that
 * the browser's 30 days slide with the server's.
 */
export function cookieCredential(auth: AuthService) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<AuthenticatedUser | undefined> => {
    const value = readCookie(request.headers.cookie, COOKIE);
    if (value === undefined) return undefined;
    const user = await auth.authenticate(value, new Date(), 'cookie');
    if (user === undefined) return undefined;
    if (!SAFE_METHODS.has(request.method) && !fromOwnOrigin(request)) throw crossOrigin();
    setSessionCookie(request, reply, value);
    return user;
  };
}

/** The base of links to the web app (invitations, the device page): PUBLIC_URL, else this request's origin. */
export function webBase(request: FastifyRequest): string {
  return request.server.publicUrl ?? ownOrigin(request);
}
