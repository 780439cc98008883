import { availableParallelism } from 'node:os';
import { hash, verify } from '@node-rs/argon2';
import { unavailable } from '../../toolkit/errors.js';

/** Contract section 12: at least 10 characters; the upper bound keeps one hash's cost bounded. */
export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 256;
/** The length rule in characters (code points), as the schemas' minLength and maxLength count. */
export const passwordLengthOk = (password: string): boolean => [...password].length >= PASSWORD_MIN && [...password].length <= PASSWORD_MAX;
/** What a password breaking passwordLengthOk is told. */
export const PASSWORD_LENGTH_RULE = `must be ${PASSWORD_MIN}–${PASSWORD_MAX} characters`;

/**
 * Hashes and checks running at once, and waiting: each takes tens of milliseconds of a core on
 * the thread pool, and sign-ins from many addresses (each its own throttle budget) took the cores
 * from every other request. Half the cores go to them at most; past the line, 503 with Retry-After.
 */
export const HASHING_AT_ONCE = Math.max(1, Math.floor(availableParallelism() / 2));
export const HASHING_WAITING = 64;
let hashing = 0;
const waiting: (() => void)[] = [];

async function inTurn<T>(work: () => Promise<T>): Promise<T> {
  if (hashing < HASHING_AT_ONCE) hashing++;
  else if (waiting.length >= HASHING_WAITING) throw unavailable('Too many sign-ins at once; retry in a second.');
  else await new Promise<void>((resolve) => waiting.push(resolve));
  try {
    return await work();
  } finally {
    // The slot passes to the next in line, or is given back.
    const next = waiting.shift();
    if (next === undefined) hashing--;
    else next();
  }
}

/*
 * argon2id (the library's default algorithm) with its default cost: 19 MiB, 2 passes, 1 lane,
 * the OWASP recommendation. The PHC string keeps the parameters, so raising them later still
 * verifies old hashes.
 */
export const hashPassword = (password: string): Promise<string> => inTurn(() => hash(password));

/** Verified for unknown handles and users without a password, so that their answer takes as long as a wrong password's. */
let dummy: Promise<string> | undefined;

/** Whether `password` matches `stored`; with no stored hash the work is done anyway on a dummy and the answer is false. */
export async function checkPassword(stored: string | null | undefined, password: string): Promise<boolean> {
  if (stored === null || stored === undefined) {
    dummy ??= hash('focus-dummy-password-never-matches');
    const against = await dummy;
    await inTurn(() => verify(against, password).catch(() => false));
    return false;
  }
  return inTurn(() => verify(stored, password).catch(() => false));
}
