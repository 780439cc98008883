import type { Storage } from '../../storage/database.js';
import { notFound, validationFailed } from '../../toolkit/errors.js';
import type { AuthenticatedUser, TokenKind } from '../auth/auth.caller.js';
import { type CredentialRow, createPeopleRepository } from '../auth/auth.people.js';
import type { AuthService } from '../auth/auth.service.js';

const TOKENS: readonly TokenKind[] = ['cli', 'personal'];
const APPS: readonly TokenKind[] = ['app'];

const scopesOf = (row: CredentialRow) => (row.scopes === null ? null : (JSON.parse(row.scopes) as string[]));

/** A user's own tokens and connected apps (contract section 12): listed without secrets, revocable. */
export function createTokensService(storage: Storage, auth: AuthService) {
  const people = createPeopleRepository(storage);
  const list = (user: AuthenticatedUser, kinds: readonly TokenKind[]) =>
    people.credentials(storage.db, { userId: user.id, kinds, now: new Date().toISOString() });
  const revoke = async (user: AuthenticatedUser, id: number, kinds: readonly TokenKind[], what: string) => {
    if (!(await people.revokeCredential(storage.db, { userId: user.id, id, kinds, at: new Date().toISOString() }))) throw notFound(what);
  };

  return {
    async tokens(user: AuthenticatedUser) {
      return (await list(user, TOKENS)).map((r) => ({
        id: r.id,
        name: r.name,
        kind: r.kind as 'cli' | 'personal',
        scopes: scopesOf(r),
        created_at: r.created_at,
        expires_at: r.expires_at,
        last_used_at: r.last_used_at,
      }));
    },

    async create(user: AuthenticatedUser, body: { name: string; scopes: string[]; expires_at?: string }) {
      if (body.expires_at !== undefined && !(Date.parse(body.expires_at) > Date.now())) {
        throw validationFailed([{ path: '/expires_at', message: 'must be in the future' }]);
      }
      const expiresAt = body.expires_at === undefined ? null : new Date(body.expires_at).toISOString();
      const scopes = [...new Set(body.scopes)];
      const { id, token } = await auth.issueCredential({ userId: user.id, kind: 'personal', name: body.name, scopes, expiresAt });
      return { id, name: body.name, kind: 'personal' as const, scopes, token, created_at: new Date().toISOString(), expires_at: expiresAt, last_used_at: null };
    },

    revokeToken: (user: AuthenticatedUser, id: number) => revoke(user, id, TOKENS, 'token'),

    async apps(user: AuthenticatedUser) {
      return (await list(user, APPS)).map((r) => ({
        id: r.id,
        client_id: r.client ?? '',
        scopes: scopesOf(r) ?? [],
        created_at: r.created_at,
        last_used_at: r.last_used_at,
      }));
    },

    revokeApp: (user: AuthenticatedUser, id: number) => revoke(user, id, APPS, 'connected app'),
  };
}

export type TokensService = ReturnType<typeof createTokensService>;
