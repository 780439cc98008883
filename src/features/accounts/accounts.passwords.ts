import { hash, verify } from '@node-rs/argon2';

/** Contract section 12: at least 10 characters; the upper bound keeps one hash's cost bounded. */
export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 256;
/** The length rule in characters (code points), as the schemas' minLength and maxLength count. */
export const passwordLengthOk = (password: string): boolean => [...password].length >= PASSWORD_MIN && [...password].length <= PASSWORD_MAX;

/*
 * argon2id (the library's default algorithm) with its default cost: 19 MiB, 2 passes, 1 lane,
 * the OWASP recommendation. The PHC string keeps the parameters, so raising them later still
 * verifies old hashes.
 */
export const hashPassword = (password: string): Promise<string> => hash(password);

/** Verified for unknown handles and users without a password, so that their answer takes as long as a wrong password's. */
let dummy: Promise<string> | undefined;

/** Whether `password` matches `stored`; with no stored hash the work is done anyway on a dummy and the answer is false. */
export async function checkPassword(stored: string | null | undefined, password: string): Promise<boolean> {
  if (stored === null || stored === undefined) {
    dummy ??= hash('focus-dummy-password-never-matches');
    await verify(await dummy, password).catch(() => false);
    return false;
  }
  return verify(stored, password).catch(() => false);
}
