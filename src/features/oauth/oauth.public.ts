/** The oauth feature (RFC 8628 device authorization, contract section 12), as the app uses it. */
export { createOAuthService, type OAuthService, EXPIRES_IN, INTERVAL } from './oauth.service.js';
export { oauthRoutes, deviceRoutes } from './oauth.routes.js';
