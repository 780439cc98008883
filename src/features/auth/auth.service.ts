import type { Storage } from '../../storage/database.js';
import type { AuthenticatedUser } from './auth.caller.js';
import { isHandle } from './auth.caller.js';
import { createAuthRepository } from './auth.repository.js';
import { generateToken, hashToken, isWellFormedToken } from './auth.token.js';

/** last_used_at is kept to the minute: a write per request would serialise every reader on SQLite. */
const TOUCH_INTERVAL_MS = 60_000;

/** A bad argument to an administrative action (the CLI's commands); its message is for the operator. */
export class AdminInputError extends Error {
  override name = 'AdminInputError';
}

/** Parses a TTL such as `30d`, `12h`, `45m`, `90s`; returns milliseconds. */
export function parseTtl(ttl: string): number {
  const match = /^(\d{1,6})([smhdw])$/.exec(ttl);
  if (match === null) throw new AdminInputError('ttl must look like 90s, 45m, 12h, 30d or 2w');
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[match[2] as 's' | 'm' | 'h' | 'd' | 'w'];
  const ms = Number(match[1]) * unit;
  if (ms <= 0) throw new AdminInputError('ttl must be positive');
  return ms;
}

export type AuthService = ReturnType<typeof createAuthService>;

/** Authentication of requests, and the administration of users and tokens (the CLI). */
export function createAuthService(storage: Storage) {
  const repo = createAuthRepository(storage);

  return {
    /**
     * Resolves a bearer token to its user, or undefined for anything unusable. Unknown,
     * malformed, expired and revoked tokens are indistinguishable to the caller.
     */
    async authenticate(token: string, now = new Date()): Promise<AuthenticatedUser | undefined> {
      if (!isWellFormedToken(token)) return undefined;
      const found = await repo.findToken(hashToken(token));
      if (found === undefined || found.revokedAt !== null) return undefined;
      const nowIso = now.toISOString();
      if (found.expiresAt !== null && found.expiresAt <= nowIso) return undefined;
      if (found.lastUsedAt === null || Date.parse(found.lastUsedAt) <= now.getTime() - TOUCH_INTERVAL_MS) {
        // The write moves the data version, so the next request reads the touched row.
        await repo.touchToken(storage.db, { tokenId: found.tokenId, at: nowIso });
      }
      return { id: found.userId, handle: found.handle, orgIds: [...found.orgIds] };
    },

    async addUser(handle: string, orgIds: readonly number[]) {
      if (!isHandle(handle)) throw new AdminInputError('handle must be 1–64 characters of [a-z0-9._-]');
      if (orgIds.length === 0) throw new AdminInputError('at least one --org is required');
      for (const org of orgIds) {
        if (!Number.isSafeInteger(org) || org < 1) throw new AdminInputError(`org id must be a positive integer: ${org}`);
      }
      const now = new Date().toISOString();
      const userId = await storage.transaction((trx) => repo.upsertUserWithOrgs(trx, { handle, orgIds, now }));
      return { handle, org_ids: await repo.orgIdsOf(storage.db, userId) };
    },

    async issueToken(handle: string, options: { name?: string; ttl?: string } = {}) {
      const user = await repo.findUserByHandle(storage.db, handle);
      if (user === undefined) throw new AdminInputError(`no user with handle ${handle}`);
      const now = new Date();
      const expiresAt = options.ttl === undefined ? null : new Date(now.getTime() + parseTtl(options.ttl)).toISOString();
      const token = generateToken();
      const id = await repo.insertToken(storage.db, {
        userId: user.id,
        name: options.name ?? null,
        tokenHash: hashToken(token),
        createdAt: now.toISOString(),
        expiresAt,
      });
      return { id, token, expires_at: expiresAt };
    },

    async revokeToken(id: number) {
      if (!Number.isSafeInteger(id) || id < 1) throw new AdminInputError('token id must be a positive integer');
      if (!(await repo.revokeToken(storage.db, { tokenId: id, at: new Date().toISOString() }))) {
        throw new AdminInputError(`no token with id ${id}`);
      }
      return { id, revoked: true as const };
    },

    countUsers: () => repo.countUsers(storage.db),
  };
}
