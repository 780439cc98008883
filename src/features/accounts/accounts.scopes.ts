import type { FastifyRequest, RouteOptions } from 'fastify';
import { API_PREFIX } from '../../toolkit/api.js';
import { insufficientScope } from '../../toolkit/errors.js';

/** The scopes a token may be limited to (contract section 12). */
export const SCOPES = ['sessions:read', 'sessions:write', 'tasks:read', 'tasks:write', 'me:read', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];
export const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);

/**
 * What a route needs of a scoped token: every scope listed (none: any token), or `full`, a
 * token with all of its user's rights (a CLI token or the sign-in cookie): account settings,
 * webhooks and calendar feeds, which hand out data or credentials of their own.
 */
export type RouteScope = readonly Scope[] | 'full';

const S_READ = ['sessions:read'] as const;
const S_WRITE = ['sessions:write'] as const;
const T_READ = ['tasks:read'] as const;
const T_WRITE = ['tasks:write'] as const;
const ME = ['me:read'] as const;
const ADMIN = ['admin'] as const;

/**
 * Every authenticated route's scope, declared once, by method and path under the API
 * prefix (HEAD as GET). A route may instead declare `config: { scope }` where it is
 * registered. A route in neither is refused to every scoped token and fails the scope
 * table test (accounts.scopes.test.ts), so no route is added without a decision.
 */
export const ROUTE_SCOPES: Readonly<Record<string, RouteScope>> = {
  'GET /me': ME,
  'PUT /me': 'full',
  'PUT /me/password': 'full',
  'GET /me/now': ME,
  'GET /me/stats': ME,
  'GET /events': ME,
  'GET /sessions': S_READ,
  'POST /sessions': S_WRITE,
  'GET /sessions/:id': S_READ,
  'PUT /sessions/:id': S_WRITE,
  'DELETE /sessions/:id': S_WRITE,
  'GET /sessions/:id/occurrences': S_READ,
  'POST /sessions/:id/join': S_WRITE,
  'POST /sessions/:id/leave': S_WRITE,
  'POST /sessions/:id/complete': S_WRITE,
  'GET /orgs/:id/stats': S_READ,
  'GET /tasks': T_READ,
  'POST /tasks': T_WRITE,
  'POST /tasks/bulk': T_WRITE,
  'GET /tasks/:id': T_READ,
  'PUT /tasks/:id': T_WRITE,
  'DELETE /tasks/:id': T_WRITE,
  'GET /changes': ['sessions:read', 'tasks:read'],
  'GET /blocker/categories': [],
  'GET /calendar-feeds': 'full',
  'POST /calendar-feeds': 'full',
  'DELETE /calendar-feeds/:id': 'full',
  'GET /webhooks': 'full',
  'POST /webhooks': 'full',
  'GET /webhooks/:id': 'full',
  'PATCH /webhooks/:id': 'full',
  'DELETE /webhooks/:id': 'full',
  'GET /webhooks/:id/deliveries': 'full',
  'POST /webhooks/:id/rotate-secret': 'full',
  'POST /webhooks/:id/test': 'full',
  'GET /me/tokens': 'full',
  'POST /me/tokens': 'full',
  'DELETE /me/tokens/:id': 'full',
  'GET /me/apps': 'full',
  'DELETE /me/apps/:id': 'full',
  'GET /device': 'full',
  'POST /device/approve': 'full',
  'POST /device/deny': 'full',
  'GET /orgs/:id/members': ADMIN,
  'PATCH /orgs/:id/members/:handle': ADMIN,
  'DELETE /orgs/:id/members/:handle': ADMIN,
  'GET /orgs/:id/invites': ADMIN,
  'POST /orgs/:id/invites': ADMIN,
  'DELETE /orgs/:id/invites/:inviteId': ADMIN,
};

/** The declared scope of a route (method, full URL), or undefined when it declares none. */
export function routeScopeOf(method: string, url: string, config?: unknown): RouteScope | undefined {
  const own = (config as { scope?: RouteScope } | undefined)?.scope;
  if (own !== undefined) return own;
  const path = url.startsWith(API_PREFIX) ? url.slice(API_PREFIX.length) : url;
  return ROUTE_SCOPES[`${method === 'HEAD' ? 'GET' : method} ${path.replace(/\/$/, '')}`];
}

/** A write scope includes reading the same records: a token that may change a session may read it back. */
const grants = (granted: readonly string[], needed: Scope) =>
  granted.includes(needed) || (needed.endsWith(':read') && granted.includes(needed.replace(/:read$/, ':write')));

/** Whether a credential with `granted` scopes (undefined: all rights) may use a route needing `needed`. */
export function allows(granted: readonly string[] | undefined, needed: RouteScope): boolean {
  if (granted === undefined) return true;
  return needed !== 'full' && needed.every((scope) => grants(granted, scope));
}

/** The auth plugin's per-route check: a scoped credential outside the route's scope is 403 `insufficient-scope`. */
export function scopeCheck(route: RouteOptions): (request: FastifyRequest) => void {
  const methods = [route.method].flat();
  const needed = routeScopeOf(methods[0] ?? 'GET', route.url, route.config) ?? 'full';
  const label = needed === 'full' ? 'all of its user’s rights (a CLI token, or the web app’s sign-in)' : `scope ${needed.join(' and ')}`;
  return (request) => {
    if (!allows(request.user.scopes, needed)) throw insufficientScope(label);
  };
}
