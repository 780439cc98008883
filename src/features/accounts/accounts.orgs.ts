import type { Db, Storage } from '../../storage/database.js';
import { conflict, forbidden, notFound } from '../../toolkit/errors.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { type PeopleRepository, type Role, createPeopleRepository } from '../auth/auth.people.js';
import { hashSecret, inviteStatus, invitesRepository, newSecret } from './accounts.repository.js';

/** An invitation link works this long (contract section 12). */
export const INVITE_LIFETIME_MS = 7 * 86_400_000;

/** The link an invitation's secret makes: the web app's invitation page, the secret in the fragment (never sent in a request line, so never logged). */
export const inviteUrl = (base: string, secret: string) => `${base}/invite#${secret}`;

const NOT_ADMIN = 'Only the org’s admins manage its people and invitations.';

/** 404 unless the caller is a member of the org, 403 unless an admin: what members see of the org they are in. */
async function requireAdmin(people: PeopleRepository, storage: Storage, user: AuthenticatedUser, orgId: number): Promise<void> {
  const role = user.orgIds.includes(orgId) ? await people.roleOf(storage.db, user.id, orgId) : undefined;
  if (role === undefined) throw notFound('org');
  if (role !== 'admin') throw forbidden(NOT_ADMIN);
}

/** An org's people and invitations, managed by its admins (contract section 12). */
export function createOrgsService(storage: Storage) {
  const people = createPeopleRepository(storage);

  /**
   * Runs fn in a transaction with the org's member `handle` (404 when there is none), once the
   * caller is found an admin there with their membership locked: an admin demoted meanwhile
   * (whose demotion locked that row) is refused after it commits, not let through.
   */
  function asAdminWithMember<T>(user: AuthenticatedUser, orgId: number, handle: string, fn: (trx: Db, member: { id: number; handle: string; role: Role }, admins: number) => Promise<T>): Promise<T> {
    return storage.transaction(async (trx) => {
      // Every such transaction locks the org's admin rows first, in one order: no two wait on each other.
      const admins = await people.lockAdmins(trx, orgId);
      if (!admins.includes(user.id)) {
        if (!user.orgIds.includes(orgId) || (await people.roleOf(trx, user.id, orgId)) === undefined) throw notFound('org');
        throw forbidden(NOT_ADMIN);
      }
      const found = await people.userByHandle(trx, handle);
      const role = found === undefined ? undefined : await people.roleOf(trx, found.id, orgId);
      if (found === undefined || role === undefined) throw notFound('member');
      return fn(trx, { id: found.id, handle: found.handle, role }, admins.length);
    });
  }

  /** 409 when `member` is the org's only admin (`admins` counted under the lock asAdminWithMember holds). */
  function keepOneAdmin(member: { role: Role }, admins: number, detail: string): void {
    if (member.role === 'admin' && admins <= 1) throw conflict(detail);
  }

  /** Creates an invitation; `by` null for the operator's CLI. */
  async function invite(by: number | null, orgId: number, base: string) {
    const secret = newSecret();
    const now = new Date();
    const expiresAt = new Date(now.getTime() + INVITE_LIFETIME_MS).toISOString();
    const id = await invitesRepository.insert(storage.db, { orgId, secretHash: hashSecret(secret), createdBy: by, now: now.toISOString(), expiresAt });
    return { id, org_id: orgId, url: inviteUrl(base, secret), expires_at: expiresAt };
  }

  return {
    async createInvite(user: AuthenticatedUser, orgId: number, base: string) {
      await requireAdmin(people, storage, user, orgId);
      return invite(user.id, orgId, base);
    },

    /** `focus invite <org>`: the org must exist (made by `focus users add`). */
    async inviteFromCli(orgId: number, base: string) {
      if (!(await people.orgExists(storage.db, orgId))) return undefined;
      return invite(null, orgId, base);
    },

    async listInvites(user: AuthenticatedUser, orgId: number) {
      await requireAdmin(people, storage, user, orgId);
      const now = new Date().toISOString();
      const rows = await invitesRepository.list(storage.db, orgId);
      return rows.map((r) => ({ id: r.id, org_id: r.org_id, created_at: r.created_at, expires_at: r.expires_at, status: inviteStatus(r, now) }));
    },

    async revokeInvite(user: AuthenticatedUser, orgId: number, id: number) {
      await requireAdmin(people, storage, user, orgId);
      if (!(await invitesRepository.revoke(storage.db, { orgId, id, now: new Date().toISOString() }))) throw notFound('pending invitation');
    },

    async members(user: AuthenticatedUser, orgId: number) {
      await requireAdmin(people, storage, user, orgId);
      return people.members(storage.db, orgId);
    },

    /**
     * Makes a member admin or member. The org's admins are locked while they are counted, so
     * two admins demoting each other at once cannot leave the org without one, and an admin
     * demoted meanwhile is refused.
     */
    async setRole(user: AuthenticatedUser, orgId: number, handle: string, role: Role) {
      return asAdminWithMember(user, orgId, handle, async (trx, member, admins) => {
        if (role === 'member') keepOneAdmin(member, admins, 'The org’s last admin stays admin; make another member admin first.');
        if (role !== member.role) await people.setRole(trx, { userId: member.id, orgId, role });
        return { handle: member.handle, role };
      });
    },

    /**
     * Ends a membership: the member's tokens and browser sessions lose the org at once on
     * every instance (signalled to every token lookup and stream, as `focus users remove`
     * does). The org's last admin stays, under the same lock as a role change.
     */
    async removeMember(user: AuthenticatedUser, orgId: number, handle: string) {
      await asAdminWithMember(user, orgId, handle, async (trx, member, admins) => {
        keepOneAdmin(member, admins, 'The org’s last admin cannot be removed; make another member admin first.');
        await people.removeMember(trx, { userId: member.id, orgId });
      });
    },
  };
}

export type OrgsService = ReturnType<typeof createOrgsService>;
