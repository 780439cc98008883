import { createHash, randomInt } from 'node:crypto';
import { crc32 } from 'node:zlib';

/*
 * Token format: `fst_` + 32 random base62 characters + 6 base62 characters of the
 * CRC-32 of the random part. The checksum lets us reject a typo before any database
 * lookup and lets secret scanners recognise a leaked token with few false positives.
 * Only the SHA-256 of the whole token is stored.
 */
const PREFIX = 'fst_';
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const TOKEN_PATTERN = new RegExp(`^${PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);

function base62(value: number, width: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < width; i++) {
    out = ALPHABET[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}

function checksum(random: string): string {
  return base62(crc32(random), CHECKSUM_LENGTH);
}

export function generateToken(): string {
  let random = '';
  // randomInt is uniform (no modulo bias) and backed by the CSPRNG.
  for (let i = 0; i < RANDOM_LENGTH; i++) random += ALPHABET[randomInt(62)];
  return PREFIX + random + checksum(random);
}

/** True when the token has our shape and its checksum matches: cheap, no I/O. */
export function isWellFormedToken(token: string): boolean {
  if (!TOKEN_PATTERN.test(token)) return false;
  const random = token.slice(PREFIX.length, PREFIX.length + RANDOM_LENGTH);
  return token.slice(PREFIX.length + RANDOM_LENGTH) === checksum(random);
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

const BEARER = /^Bearer +(\S+) *$/i;
const BEARER_CREDENTIALS = /^Bearer +\S/i;

/** The token of an `Authorization: Bearer <token>` header (scheme in any case), or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  return header === undefined ? undefined : BEARER.exec(header)?.[1];
}

/**
 * Whether the header presents a bearer token at all, well-formed or not (`Bearer abc`,
 * `Bearer a b`): RFC 6750 section 3.1 names `invalid_token` in the 401 only then.
 */
export function presentsBearerToken(header: string | undefined): boolean {
  return header !== undefined && BEARER_CREDENTIALS.test(header);
}
