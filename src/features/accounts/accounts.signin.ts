import { randomBytes } from 'node:crypto';
import type { Db, Storage } from '../../storage/database.js';
import { notFound, rateLimited, signInFailed, unauthorized, validationFailed } from '../../toolkit/errors.js';
import type { FieldError } from '../../toolkit/errors.js';
import { type AuthenticatedUser, isHandle } from '../auth/auth.caller.js';
import { type PeopleRepository, createPeopleRepository } from '../auth/auth.people.js';
import { type AuthService, SESSION_LIFETIME_MS } from '../auth/auth.service.js';
import { PASSWORD_LENGTH_RULE, checkPassword, hashPassword, passwordLengthOk } from './accounts.passwords.js';
import { hashSecret, inviteStatus, invitesRepository } from './accounts.repository.js';
import { type SsoIdentity, SsoRefused } from './accounts.sso.js';
import { type LoginThrottle, createLoginThrottle } from './accounts.throttle.js';

export interface AcceptBody {
  secret: string;
  handle?: string;
  password?: string;
}

/** Who accepts: the user a sign-in cookie or bearer token names (none when it no longer signs anyone in), and which was sent. */
export interface InviteCaller {
  user?: AuthenticatedUser | undefined;
  sent?: 'bearer' | 'cookie';
}

function newAccountErrors(body: AcceptBody): FieldError[] {
  const errors: FieldError[] = [];
  if (body.handle === undefined || !isHandle(body.handle)) errors.push({ path: '/handle', message: 'must be 1–64 characters of a-z 0-9 . _ -' });
  if (body.password === undefined || !passwordLengthOk(body.password)) errors.push({ path: '/password', message: PASSWORD_LENGTH_RULE });
  return errors;
}

/** A user for a verified email, without a password: the handle is the address's local part, numbered when taken. */
async function createSsoUser(people: PeopleRepository, db: Db, email: string, now: string): Promise<number> {
  const local = email.slice(0, email.lastIndexOf('@')).replace(/[^a-z0-9._-]/g, '').slice(0, 56);
  const base = isHandle(local) ? local : 'user';
  for (let n = 1; ; n += 1) {
    const handle = n === 1 ? base : `${base}-${n < 10 ? n : randomBytes(3).toString('hex')}`;
    const id = await people.createUser(db, { handle, passwordHash: null, now, email });
    if (id !== undefined) return id;
  }
}

export interface PasswordChange {
  current_password: string;
  new_password: string;
}

/**
 * Changes the caller's password. The current one must match, throttled as a sign-in is (a
 * stolen cookie must not be a way to guess it); every other browser session of theirs then
 * ends, while this one and API tokens stay (contract section 12 is silent; docs/api.md).
 */
async function changePassword(
  { storage, people, throttle }: { storage: Storage; people: PeopleRepository; throttle: LoginThrottle },
  user: AuthenticatedUser,
  body: PasswordChange,
  address: string,
): Promise<void> {
  const wait = throttle.retryAfter(user.handle, address);
  if (wait > 0) throw rateLimited(wait);
  const stored = (await people.userByHandle(storage.db, user.handle))?.password_hash ?? null;
  if (stored === null) throw validationFailed([{ path: '/current_password', message: 'you sign in through single sign-on: there is no password to change' }]);
  if (!(await checkPassword(stored, body.current_password))) {
    throttle.failed(user.handle, address);
    throw validationFailed([{ path: '/current_password', message: 'is not your password' }]);
  }
  throttle.succeeded(user.handle, address);
  const passwordHash = await hashPassword(body.new_password);
  const kept = user.credential?.kind === 'session' ? user.credential.id : undefined;
  await storage.transaction((trx) => people.replacePassword(trx, { userId: user.id, passwordHash, keep: kept, at: new Date().toISOString() }));
}

/** Sign-in, sign-out and accepting invitations: what makes and ends browser sessions (contract section 12). */
export function createSigninService(storage: Storage, auth: AuthService, throttle: LoginThrottle = createLoginThrottle()) {
  const people = createPeopleRepository(storage);

  /** A new browser session for the user: a fresh value at every sign-in, so a value planted before it is worth nothing (no fixation). */
  const newSession = (userId: number) =>
    auth.issueCredential({ userId, kind: 'session', name: null, scopes: null, expiresAt: new Date(Date.now() + SESSION_LIFETIME_MS).toISOString() });

  /** Uses the invitation for `userId`, who joins its org as a member; false when it was used meanwhile (nothing changes). */
  async function acceptInvite(trx: Db, invite: { id: number; org_id: number }, userId: number, now: string): Promise<boolean> {
    if (!(await invitesRepository.use(trx, { id: invite.id, userId, now }))) return false;
    await people.addMember(trx, { userId, orgId: invite.org_id, role: 'member', now });
    return true;
  }

  /** A pending invitation by its secret; any other (unknown, used, revoked, expired) is one 404. */
  async function pendingInvite(secret: string) {
    const row = await invitesRepository.byHash(storage.db, hashSecret(secret));
    if (row === undefined || inviteStatus(row, new Date().toISOString()) !== 'pending') throw notFound('invitation');
    return row;
  }

  return {
    /**
     * Verifies the password (argon2id; against a dummy hash when there is no such user, so
     * that both take as long) and opens a session; a throttled address gets 429 first.
     */
    async login(handle: string, password: string, address: string): Promise<string> {
      const wait = throttle.retryAfter(handle, address);
      if (wait > 0) throw rateLimited(wait);
      const user = isHandle(handle) ? await people.userByHandle(storage.db, handle) : undefined;
      const matches = await checkPassword(user?.password_hash, password);
      if (user === undefined || !matches || user.disabled_at !== null) {
        throttle.failed(handle, address);
        throw signInFailed();
      }
      throttle.succeeded(handle, address);
      return (await newSession(user.id)).token;
    },

    /** Ends the browser session the request came with (a bearer token is not ended by signing out). */
    async logout(user: AuthenticatedUser | undefined): Promise<void> {
      const credential = user?.credential;
      if (user === undefined || credential?.kind !== 'session') return;
      await people.revokeCredential(storage.db, { userId: user.id, id: credential.id, kinds: ['session'], at: new Date().toISOString() });
    },

    /**
     * Single sign-on's last step (the provider vouched for `email`): the user an operator gave
     * that email, or, with a pending invitation, a new user made from it, who joins the org.
     * A known user who brings an invitation joins its org too. Anyone else: undefined, and
     * nothing is created. Returns a new session's value.
     */
    async signInWithSso(identity: SsoIdentity): Promise<string | undefined> {
      const now = new Date().toISOString();
      const user = await people.userByEmail(storage.db, identity.email);
      const invite = identity.inviteHash === null ? undefined : await invitesRepository.byHash(storage.db, identity.inviteHash);
      const pending = invite !== undefined && inviteStatus(invite, now) === 'pending' ? invite : undefined;
      if (user !== undefined && user.disabled_at !== null) return undefined;
      if (user === undefined && pending === undefined) return undefined;
      const userId = await storage.transaction(async (trx) => {
        const id = user?.id ?? (await createSsoUser(people, trx, identity.email, now));
        if (pending === undefined) return id;
        // Used by someone else meanwhile: a new user goes with the rolled-back transaction.
        if (!(await acceptInvite(trx, pending, id, now)) && user === undefined) throw new SsoRefused('the invitation was used meanwhile');
        return id;
      });
      return (await newSession(userId)).token;
    },

    /** See changePassword. */
    changePassword: (user: AuthenticatedUser, body: PasswordChange, address: string) => changePassword({ storage, people, throttle }, user, body, address),

    /** What an invitation is for, before accepting it. */
    async preview(secret: string) {
      const row = await pendingInvite(secret);
      return { org_id: row.org_id, expires_at: row.expires_at };
    },

    /**
     * Accepts an invitation: a signed-in user sending no handle just joins the org; anyone
     * else creates an account (handle and password) and is signed in. One use only: of two
     * racing accepts one wins, the other is 404 and changes nothing.
     */
    async accept(body: AcceptBody, caller: InviteCaller) {
      const invite = await pendingInvite(body.secret);
      const now = new Date().toISOString();
      const current = caller.user;
      const joining = body.handle === undefined && body.password === undefined;
      // Relied on to join, a cookie or token that no longer signs anyone in is a session ended elsewhere, not a missing handle.
      if (joining && current === undefined && caller.sent !== undefined) throw unauthorized(caller.sent === 'bearer');
      if (joining && current !== undefined) {
        await storage.transaction(async (trx) => {
          if (!(await acceptInvite(trx, invite, current.id, now))) throw notFound('invitation');
        });
        return { result: { handle: current.handle, org_id: invite.org_id }, session: undefined };
      }
      const errors = newAccountErrors(body);
      if (errors.length > 0) throw validationFailed(errors);
      const handle = body.handle as string;
      const passwordHash = await hashPassword(body.password as string);
      const userId = await storage.transaction(async (trx) => {
        const id = await people.createUser(trx, { handle, passwordHash, now });
        if (id === undefined) throw validationFailed([{ path: '/handle', message: 'is taken: choose another' }]);
        if (!(await acceptInvite(trx, invite, id, now))) throw notFound('invitation');
        return id;
      });
      return { result: { handle, org_id: invite.org_id }, session: (await newSession(userId)).token };
    },
  };
}

export type SigninService = ReturnType<typeof createSigninService>;
