/**
 * The accounts feature (contract section 12), as the rest of the service uses it: roles and
 * invitations, sign-in with a cookie, personal tokens and scopes.
 */
import type { Storage } from '../../storage/database.js';
import type { AuthService } from '../auth/auth.service.js';
import { cookieCredential } from './accounts.cookies.js';
import { createOrgsService } from './accounts.orgs.js';
import { scopeCheck } from './accounts.scopes.js';
import { createSigninService } from './accounts.signin.js';
import { type SsoSettings, createSsoClient } from './accounts.sso.js';
import { createTokensService } from './accounts.tokens.js';

export { accountsRoutes } from './accounts.routes.js';
export { signinRoutes } from './accounts.signin.routes.js';
export { ssoRoutes } from './accounts.sso.routes.js';
export type { SsoSettings } from './accounts.sso.js';
export { SCOPES, type Scope, isScope, routeScopeOf, allows } from './accounts.scopes.js';
export { COOKIE, readCookie, fromOwnOrigin, webBase } from './accounts.cookies.js';
export { INVITE_LIFETIME_MS } from './accounts.orgs.js';
/** What the CLI needs: invitations, and a password set by the operator. */
export { createAccountsAdmin } from './accounts.operator.js';

/** The services, and the auth plugin's options that make cookies and scopes work on every API route; single sign-on when configured. */
export function createAccounts(storage: Storage, auth: AuthService, sso?: SsoSettings) {
  return {
    sso: sso === undefined ? undefined : createSsoClient(storage, sso),
    orgs: createOrgsService(storage),
    signin: createSigninService(storage, auth),
    tokens: createTokensService(storage, auth),
    authOptions: { otherCredential: cookieCredential(auth), routeCheck: scopeCheck },
  };
}
