import type { Storage } from '../../storage/database.js';
import { createPeopleRepository } from '../auth/auth.people.js';
import { AdminInputError } from '../auth/auth.service.js';
import { createOrgsService } from './accounts.orgs.js';
import { PASSWORD_LENGTH_RULE, hashPassword, passwordLengthOk } from './accounts.passwords.js';

/**
 * What the operator does from the command line: invitations, and the way back in for a
 * person who forgot their password (`focus users password`), as self-hosted tools offer
 * (the operator holds the database anyway). Every browser session of theirs ends with it.
 */
export function createAccountsAdmin(storage: Storage) {
  const people = createPeopleRepository(storage);
  return {
    ...createOrgsService(storage),

    async setPassword(handle: string, password: string): Promise<{ handle: string }> {
      if (!passwordLengthOk(password)) throw new AdminInputError(`the password ${PASSWORD_LENGTH_RULE}`);
      const user = await people.userByHandle(storage.db, handle);
      if (user === undefined) throw new AdminInputError(`no user with handle ${handle}`);
      const passwordHash = await hashPassword(password);
      await storage.transaction((trx) => people.replacePassword(trx, { userId: user.id, passwordHash, keep: undefined, at: new Date().toISOString() }));
      return { handle };
    },
  };
}
