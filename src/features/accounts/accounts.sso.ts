import { timingSafeEqual } from 'node:crypto';
import * as oidc from 'openid-client';
import type { Storage } from '../../storage/database.js';
import { hashSecret } from './accounts.repository.js';

/** What single sign-on needs from the configuration (contract section 12). */
export interface SsoSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

/** Each call to the provider (discovery, keys, token) has this long, lookups included (contract section 13). */
const CALL_TIMEOUT_S = 2;
/** How long a person has between leaving for the provider and coming back. */
const ATTEMPT_LIFETIME_MS = 10 * 60_000;

/** Why a sign-on was refused: logged, never shown (the person sees one generic failure). */
export class SsoRefused extends Error {
  override name = 'SsoRefused';
}

/** Who the provider says signed in: an email it has verified, lower-cased, and the invitation the attempt carried. */
export interface SsoIdentity {
  email: string;
  inviteHash: string | null;
}

const sameText = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * The relying party of single sign-on with one OpenID Connect provider: authorization code
 * with PKCE (S256), state and nonce. The provider's metadata is discovered once per process
 * (a failed discovery is tried again by the next sign-in); an attempt in flight is a row
 * keyed by the hash of its state, so any instance may finish it, and only once.
 */
export function createSsoClient(storage: Storage, settings: SsoSettings) {
  let discovered: Promise<oidc.Configuration> | undefined;
  const insecure = new URL(settings.issuer).protocol === 'http:';

  function configuration(): Promise<oidc.Configuration> {
    discovered ??= oidc
      .discovery(new URL(settings.issuer), settings.clientId, undefined, oidc.ClientSecretBasic(settings.clientSecret), {
        timeout: CALL_TIMEOUT_S,
        // Only a loopback issuer may be plain http (the configuration refuses any other).
        execute: insecure ? [oidc.allowInsecureRequests] : [],
      })
      .catch((error: unknown) => {
        discovered = undefined;
        throw error;
      });
    return discovered;
  }

  /** The attempt of this state, removed as it is read: of two callbacks with one state, one finds it. */
  async function takeAttempt(state: string) {
    const stateHash = hashSecret(state);
    const row = await storage.db.deleteFrom('oidc_logins').where('state_hash', '=', stateHash).returningAll().executeTakeFirst();
    if (row === undefined) throw new SsoRefused('no such sign-on attempt (unknown or used)');
    if (row.expires_at <= new Date().toISOString()) throw new SsoRefused('the sign-on attempt expired');
    return row;
  }

  return {
    /**
     * Starts an attempt: stores what the callback checks and returns the provider's
     * authorization URL and the state, which the browser keeps in a cookie (so that only the
     * browser that left can come back with it: no signing a victim into another's account).
     */
    async start(redirectUri: string, inviteSecret: string | undefined): Promise<{ url: string; state: string }> {
      const config = await configuration();
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      const verifier = oidc.randomPKCECodeVerifier();
      const now = Date.now();
      await storage.db.deleteFrom('oidc_logins').where('expires_at', '<=', new Date(now).toISOString()).execute();
      await storage.db
        .insertInto('oidc_logins')
        .values({
          state_hash: hashSecret(state),
          code_verifier: verifier,
          nonce,
          invite_hash: inviteSecret === undefined ? null : hashSecret(inviteSecret),
          expires_at: new Date(now + ATTEMPT_LIFETIME_MS).toISOString(),
        })
        .execute();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: 'openid email',
        state,
        nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      });
      return { url: url.href, state };
    },

    /**
     * Finishes an attempt from the callback URL the browser came back to: the state must be
     * the browser's own, the code is exchanged with the PKCE verifier, the ID token's
     * signature, issuer, audience, expiry and nonce are checked, and the email must be
     * verified by the provider. Anything else throws (SsoRefused or the library's error).
     */
    async finish(callbackUrl: URL, browserState: string | undefined): Promise<SsoIdentity> {
      const state = callbackUrl.searchParams.get('state');
      if (state === null || browserState === undefined || !sameText(state, browserState)) throw new SsoRefused('the state is not this browser’s');
      const attempt = await takeAttempt(state);
      const config = await configuration();
      const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: attempt.code_verifier,
        expectedNonce: attempt.nonce,
        expectedState: state,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      if (claims === undefined) throw new SsoRefused('no ID token');
      // Providers may keep the email for the userinfo endpoint (OpenID Connect Core 5.4): asked for the same subject.
      const vouched = typeof claims.email === 'string' ? claims : await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
      if (vouched.email_verified !== true || typeof vouched.email !== 'string') throw new SsoRefused('the provider did not vouch for an email');
      return { email: vouched.email.toLowerCase(), inviteHash: attempt.invite_hash };
    },
  };
}

export type SsoClient = ReturnType<typeof createSsoClient>;
