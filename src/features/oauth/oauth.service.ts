import { randomBytes, randomInt } from 'node:crypto';
import type { Storage } from '../../storage/database.js';
import { UniqueViolationError } from '../../storage/storage.errors.js';
import { notFound } from '../../toolkit/errors.js';
import { isScope } from '../accounts/accounts.public.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import type { AuthService } from '../auth/auth.service.js';
import { hashToken } from '../auth/auth.token.js';
import { deviceCodes } from './oauth.repository.js';

/** RFC 8628 values the contract fixes: 10 minutes to approve, polls every 5 s (+5 s at each `slow_down`). */
export const EXPIRES_IN = 600;
export const INTERVAL = 5;
/** No vowels (no words) and no look-alikes (0/O, 1/I/L, 2/Z, 5/S, 8/B): RFC 8628 section 6.1. */
const USER_CODE_ALPHABET = 'CDFGHJKMNPQRTVWX3479';
const USER_CODE_LENGTH = 8;
const CLIENT_ID = /^[^\p{Cc}]{1,100}$/u;

/** An RFC 8628 / RFC 6749 error: answered as `{"error": code}` with 400. */
export class OAuthError extends Error {
  constructor(readonly code: string, readonly description: string) {
    super(description);
  }
}

/** What a person types: case, spaces and dashes do not matter. */
export const normalizeUserCode = (typed: string) => typed.toUpperCase().replace(/[\s-]/g, '');
const display = (code: string) => `${code.slice(0, 4)}-${code.slice(4)}`;

function newUserCode(): string {
  let code = '';
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

export function parseScopes(scope: string | undefined): string[] {
  const scopes = [...new Set((scope ?? '').split(' ').filter((s) => s !== ''))];
  if (scopes.length === 0 || !scopes.every(isScope)) throw new OAuthError('invalid_scope', 'scope must name one or more of the documented scopes, separated by spaces');
  return scopes;
}

/** The OAuth 2.0 Device Authorization Grant (RFC 8628, contract section 12): an app gets a token once its person approves. */
export function createOAuthService(storage: Storage, auth: AuthService) {
  const db = storage.db;

  async function pending(typed: string) {
    const row = await deviceCodes.byUserCode(db, normalizeUserCode(typed));
    if (row === undefined || row.status !== 'pending' || row.expires_at <= new Date().toISOString()) throw notFound('device code');
    return row;
  }

  /** Inserts the grant under a new user code; a code that clashes with a live one (unique index) is drawn again. */
  async function insertWithFreshCode(row: Omit<Parameters<typeof deviceCodes.insert>[1], 'userCode'>): Promise<string> {
    for (let attempt = 1; ; attempt++) {
      const userCode = newUserCode();
      try {
        await deviceCodes.insert(db, { ...row, userCode });
        return userCode;
      } catch (error) {
        if (!(error instanceof UniqueViolationError) || attempt === 3) throw error;
      }
    }
  }

  return {
    async authorize(body: { client_id?: string; scope?: string }, base: string) {
      if (body.client_id === undefined || !CLIENT_ID.test(body.client_id)) throw new OAuthError('invalid_request', 'client_id (the app’s name, 1–100 characters) is required');
      const scopes = parseScopes(body.scope);
      const now = new Date();
      await deviceCodes.purge(db, new Date(now.getTime() - 86_400_000).toISOString());
      const deviceCode = randomBytes(32).toString('base64url');
      const row = {
        deviceCodeHash: hashToken(deviceCode),
        client: body.client_id,
        scopes: scopes.join(' '),
        now: now.toISOString(),
        expiresAt: new Date(now.getTime() + EXPIRES_IN * 1000).toISOString(),
        interval: INTERVAL,
      };
      const userCode = await insertWithFreshCode(row);
      const verification = `${base}/device`;
      return {
        device_code: deviceCode,
        user_code: display(userCode),
        verification_uri: verification,
        verification_uri_complete: `${verification}?user_code=${display(userCode)}`,
        expires_in: EXPIRES_IN,
        interval: INTERVAL,
      };
    },

    /** The token endpoint's answer for a device code, exactly as RFC 8628 section 3.5 orders it. */
    async token(body: { grant_type?: string; device_code?: string; client_id?: string }) {
      if (body.grant_type !== 'urn:ietf:params:oauth:grant-type:device_code') throw new OAuthError('unsupported_grant_type', 'only the device_code grant is supported');
      if (body.device_code === undefined) throw new OAuthError('invalid_request', 'device_code is required');
      const row = await deviceCodes.byHash(db, hashToken(body.device_code));
      if (row === undefined || row.status === 'issued' || (body.client_id !== undefined && body.client_id !== row.client)) {
        throw new OAuthError('invalid_grant', 'unknown or already used device_code');
      }
      const now = new Date();
      if (row.expires_at <= now.toISOString()) throw new OAuthError('expired_token', 'the device code expired; start again');
      if (row.status === 'denied') throw new OAuthError('access_denied', 'the person denied the request');
      if (row.status === 'pending') {
        const early = row.polled_at !== null && now.getTime() - Date.parse(row.polled_at) < row.interval_s * 1000;
        await deviceCodes.polled(db, { id: row.id, at: now.toISOString(), interval: early ? row.interval_s + 5 : row.interval_s });
        if (early) throw new OAuthError('slow_down', `poll at most every ${row.interval_s + 5} s`);
        throw new OAuthError('authorization_pending', 'the person has not approved yet');
      }
      // Approved: one token, once; a racing second poll finds it issued.
      if (row.user_id === null || !(await deviceCodes.move(db, { id: row.id, from: 'approved', to: 'issued' }))) throw new OAuthError('invalid_grant', 'already used');
      const scopes = row.scopes.split(' ');
      const { token } = await auth.issueCredential({ userId: row.user_id, kind: 'app', name: row.client, scopes, expiresAt: null, client: row.client });
      return { access_token: token, token_type: 'Bearer' as const, scope: row.scopes };
    },

    /** What the device page shows before the person decides. */
    async describe(typed: string) {
      const row = await pending(typed);
      return { client_id: row.client, scopes: row.scopes.split(' '), user_code: display(row.user_code), expires_at: row.expires_at };
    },

    async decide(user: AuthenticatedUser, typed: string, approve: boolean) {
      const row = await pending(typed);
      if (!(await deviceCodes.move(db, { id: row.id, from: 'pending', to: approve ? 'approved' : 'denied', userId: user.id }))) throw notFound('device code');
    },
  };
}

export type OAuthService = ReturnType<typeof createOAuthService>;
