import type { Storage } from '../../storage/database.js';
import { validationFailed } from '../../toolkit/errors.js';
import { NOT_A_TIME_ZONE, canonicalTimeZone } from '../recurrence/recurrence.time.js';
import type { AuthenticatedUser, TokenKind } from './auth.caller.js';
import { isHandle } from './auth.caller.js';
import { readHomeReminders, writeHomeReminders } from './auth.principals.js';
import { createPeopleRepository } from './auth.people.js';
import { type AuthRepository, createAuthRepository } from './auth.repository.js';
import { generateToken, hashToken, isWellFormedToken } from './auth.token.js';

/** last_used_at is kept to the minute: a write per request would serialise every reader on SQLite. */
const TOUCH_INTERVAL_MS = 60_000;
/** A browser session ends this long after its last use (contract section 12: 30 days, sliding). */
export const SESSION_LIFETIME_MS = 30 * 86_400_000;

/** A bad argument to an administrative action (the CLI's commands); its message is for the operator. */
export class AdminInputError extends Error {
  override name = 'AdminInputError';
}

const TTL_UNITS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
/** The latest expiry an ISO 8601 instant with a four-digit year can state. */
const LATEST_EXPIRY_MS = Date.parse('9999-12-31T23:59:59.999Z');
const NAME_MAX = 200;

/** The expiry `ttl` (`90s`, `45m`, `12h`, `30d`, `2w`) after `now`, in milliseconds since the epoch. */
export function expiryFromTtl(ttl: string, now: number): number {
  const match = /^(-?)(\d+)([smhdw])$/.exec(ttl);
  if (match === null) throw new AdminInputError(`--ttl must be a whole number and a unit s, m, h, d or w (90s, 45m, 12h, 30d, 2w): ${ttl}`);
  const digits = match[2] ?? '';
  if (match[1] === '-' || /^0+$/.test(digits)) throw new AdminInputError(`--ttl must be more than zero: ${ttl}`);
  const expiry = now + Number(digits) * TTL_UNITS[match[3] as keyof typeof TTL_UNITS];
  if (!(expiry <= LATEST_EXPIRY_MS)) {
    throw new AdminInputError(`--ttl ${ttl} ends after the year 9999; leave --ttl out for a token that never expires`);
  }
  return expiry;
}

function requireHandle(handle: string): void {
  if (!isHandle(handle)) throw new AdminInputError(`handle must be 1–64 characters of [a-z0-9._-]: ${handle}`);
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
    async authenticate(token: string, now = new Date(), via: 'bearer' | 'cookie' = 'bearer'): Promise<AuthenticatedUser | undefined> {
      if (!isWellFormedToken(token)) return undefined;
      const hash = hashToken(token);
      const found = await repo.findToken(hash);
      if (found === undefined || found.revokedAt !== null || found.disabledAt !== null) return undefined;
      // A sign-in cookie is no bearer token and a bearer token no cookie: each is refused where the other belongs.
      if ((found.kind === 'session') !== (via === 'cookie')) return undefined;
      const nowIso = now.toISOString();
      if (found.expiresAt !== null && found.expiresAt <= nowIso) return undefined;
      if (found.lastUsedAt === null || Date.parse(found.lastUsedAt) <= now.getTime() - TOUCH_INTERVAL_MS) {
        // A browser session slides: each use (to the minute) moves its end SESSION_LIFETIME_MS ahead.
        const slideTo = found.kind === 'session' ? new Date(now.getTime() + SESSION_LIFETIME_MS).toISOString() : undefined;
        await repo.touchToken(storage.db, found, nowIso, slideTo);
      }
      const scopes = found.scopes === null ? {} : { scopes: JSON.parse(found.scopes) as string[] };
      return {
        id: found.userId,
        handle: found.handle,
        orgIds: [...found.orgIds],
        timezone: found.timezone,
        ...scopes,
        credential: { id: found.tokenId, kind: found.kind, hash },
      };
    },

    /**
     * Issues a credential of another kind than the CLI's (a personal or app token, a browser
     * session) to a user by id: shown once, stored as its hash.
     */
    async issueCredential(q: { userId: number; kind: TokenKind; name: string | null; scopes: readonly string[] | null; expiresAt: string | null; client?: string }) {
      const token = generateToken();
      const id = await repo.insertToken(storage.db, {
        userId: q.userId,
        name: q.name,
        tokenHash: hashToken(token),
        createdAt: new Date().toISOString(),
        expiresAt: q.expiresAt,
        kind: q.kind,
        scopes: q.scopes === null ? null : JSON.stringify(q.scopes),
        client: q.client ?? null,
      });
      return { id, token };
    },

    /**
     * Those of the tokens (by hash, auth.token.ts hashToken) still usable now, with their
     * user's orgs now: how a long-lived request (an event stream) learns that its token was
     * revoked or expired, or that its user joined another org.
     */
    activeTokens: (hashes: readonly string[], now = new Date()) => repo.activeTokens(hashes, now.toISOString()),

    /**
     * An opaque value that moves whenever a token was revoked, a user disabled or a
     * membership changed, by any process (undefined: cannot be told now): a long-lived
     * request checks its token again when it moves instead of waiting for its next look.
     */
    revision: () => repo.revision(),

    /** Principals (user and memberships, as a request sees its caller) of many users at once, by id. */
    principals: (userIds: readonly number[]) => repo.principals(userIds),

    /** `GET /me`: the caller as the token lookup found them, and their reminders (one statement). */
    me: async (user: AuthenticatedUser) => ({
      handle: user.handle,
      org_ids: user.orgIds,
      timezone: user.timezone,
      reminders: await readHomeReminders(storage.db, user.id),
    }),

    /**
     * `PUT /me`: changes the caller's home zone and, when sent, reminders. Sessions keep the
     * zone they were created with, so none of them moves; only sessions created afterwards
     * take the new one.
     */
    async updateMe(user: AuthenticatedUser, changes: { timezone: string; reminders?: number[] | undefined }) {
      const timezone = canonicalTimeZone(changes.timezone);
      if (timezone === undefined) throw validationFailed([{ path: '/timezone', message: NOT_A_TIME_ZONE }]);
      // Written even when it looks unchanged: `user` may come from a cached lookup. The write
      // signals the change, so every instance's token lookup cache reads the new zone.
      // One transaction: a failed reminders write leaves the zone as it was.
      await storage.transaction(async (trx) => {
        await repo.setTimezone(trx, { userId: user.id, timezone });
        if (changes.reminders !== undefined) await writeHomeReminders(trx, user.id, changes.reminders);
      });
      return { handle: user.handle, org_ids: user.orgIds, timezone, reminders: changes.reminders ?? (await readHomeReminders(storage.db, user.id)) };
    },

    ...userAdministration(storage, repo),
    ...tokenAdministration(storage, repo),
  };
}

async function existingUser(storage: Storage, repo: AuthRepository, handle: string) {
  requireHandle(handle);
  const user = await repo.findUserByHandle(storage.db, handle);
  if (user === undefined) throw new AdminInputError(`no user with handle ${handle}`);
  return user;
}

/** The administration of users (the CLI's commands); a bad argument is an AdminInputError. */
function userAdministration(storage: Storage, repo: AuthRepository) {
  const people = createPeopleRepository(storage);
  return {
    /**
     * Creates the user (home zone `timezone`, default UTC) or adds orgs to an existing one;
     * with `timezone` an existing user's home zone changes too, without it it is kept.
     */
    async addUser(handle: string, orgIds: readonly number[], options: { timezone?: string; admin?: boolean } = {}) {
      requireHandle(handle);
      if (orgIds.length === 0) throw new AdminInputError('at least one --org is required');
      for (const org of orgIds) {
        if (!Number.isSafeInteger(org) || org < 1) throw new AdminInputError(`org id must be a positive integer: ${org}`);
      }
      const timezone = options.timezone === undefined ? undefined : canonicalTimeZone(options.timezone);
      if (options.timezone !== undefined && timezone === undefined) {
        throw new AdminInputError(`--timezone must be an IANA time zone name such as Europe/Berlin or UTC: ${options.timezone}`);
      }
      const now = new Date().toISOString();
      const userId = await storage.transaction(async (trx) => {
        const id = await repo.upsertUserWithOrgs(trx, { handle, orgIds, now, timezone });
        // `--admin` makes the user an admin of each org named; without it roles are kept.
        if (options.admin === true) for (const orgId of orgIds) await people.setRole(trx, { userId: id, orgId, role: 'admin' });
        return id;
      });
      return { handle, org_ids: await repo.orgIdsOf(storage.db, userId) };
    },

    async listUsers() {
      const users = await repo.listUsersWithOrgs(storage.db);
      return { data: users.map((u) => ({ handle: u.handle, org_ids: u.orgIds, timezone: u.timezone, disabled: u.disabled })) };
    },

    /** The ids of an org's members: whom the org's statistics sum over. */
    async memberIds(orgId: number): Promise<number[]> {
      return repo.memberIdsOf(storage.db, orgId);
    },

    /** The id of the user with this handle, for the other features' administrative commands. */
    async userIdOf(handle: string): Promise<number> {
      return (await existingUser(storage, repo, handle)).id;
    },

    /**
     * Off-boarding (contract section 13): while disabled, every token of the user is refused
     * (401), and the event streams, webhooks and calendar feeds that read this flag stop.
     * Reversible with `enabled: false`; the tokens are kept, not revoked.
     */
    async setDisabled(handle: string, disabled: boolean) {
      const user = await existingUser(storage, repo, handle);
      await repo.setDisabled(storage.db, { userId: user.id, at: disabled ? new Date().toISOString() : null });
      return { handle, disabled };
    },

    /** Ends the user's membership of `orgId`: their tokens, streams, webhooks and feeds no longer see its sessions. */
    async removeMembership(handle: string, orgId: number) {
      const user = await existingUser(storage, repo, handle);
      if (!(await people.removeMember(storage.db, { userId: user.id, orgId }))) {
        throw new AdminInputError(`${handle} is not a member of org ${orgId}`);
      }
      return { handle, org_ids: await repo.orgIdsOf(storage.db, user.id) };
    },

    /**
     * Sets (or, with null, clears) the email single sign-on matches the user by: the operator
     * vouches that it is theirs, since whoever the provider verifies for it signs in as them.
     */
    async setEmail(handle: string, email: string | null) {
      const user = await existingUser(storage, repo, handle);
      const address = email?.trim().toLowerCase() ?? null;
      if (address !== null && (address.length > 254 || !/^[^\s@]+@[^\s@]+$/.test(address))) throw new AdminInputError(`not an email address: ${email}`);
      const holder = address === null ? undefined : await people.userByEmail(storage.db, address);
      if (holder !== undefined && holder.id !== user.id) throw new AdminInputError(`${holder.handle} already has the email ${address}`);
      await people.setEmail(storage.db, { userId: user.id, email: address });
      return { handle, email: address };
    },

    countUsers: () => repo.countUsers(storage.db),
  };
}

/** The administration of tokens (the CLI's commands); a bad argument is an AdminInputError. */
function tokenAdministration(storage: Storage, repo: AuthRepository) {
  return {
    async issueToken(handle: string, options: { name?: string; ttl?: string } = {}) {
      const { name } = options;
      // eslint-disable-next-line no-control-regex
      if (name !== undefined && (name.trim() === '' || name.length > NAME_MAX || /[\u0000-\u001f\u007f]/.test(name))) {
        throw new AdminInputError(`--name must be 1–${NAME_MAX} characters, not only spaces, without control characters`);
      }
      const now = new Date();
      const expiresAt = options.ttl === undefined ? null : new Date(expiryFromTtl(options.ttl, now.getTime())).toISOString();
      const user = await repo.findUserByHandle(storage.db, handle);
      if (user === undefined) throw new AdminInputError(`no user with handle ${handle}`);
      const token = generateToken();
      const id = await repo.insertToken(storage.db, {
        userId: user.id,
        name: name ?? null,
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

    /** Every token, or one user's: its metadata only, never the token or its hash. */
    async listTokens(handle?: string) {
      const userId = handle === undefined ? undefined : (await existingUser(storage, repo, handle)).id;
      const rows = await repo.listTokens(storage.db, userId);
      return {
        data: rows.map((t) => ({
          id: t.id,
          handle: t.handle,
          name: t.name,
          created_at: t.created_at,
          expires_at: t.expires_at,
          last_used_at: t.last_used_at,
          revoked: t.revoked_at !== null,
        })),
      };
    },
  };
}
