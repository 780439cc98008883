import { createHash, randomBytes } from 'node:crypto';

/*
 * A feed secret is the base64url text of 32 random bytes (43 characters, 256 bits):
 * unguessable, and URL-safe as a path segment. Only its SHA-256 is stored, as for tokens,
 * so a leaked database holds no working feed URL; a plain hash is enough for 256 random
 * bits (there is nothing to brute-force).
 */
const SECRET_BYTES = 32;
const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export const generateFeedSecret = () => randomBytes(SECRET_BYTES).toString('base64url');

export const hashFeedSecret = (secret: string) => createHash('sha256').update(secret).digest('hex');

/** The secret of an `.ics` path segment, or undefined when it cannot be one of ours (no lookup needed). */
export function secretOfFile(file: string): string | undefined {
  if (!file.endsWith('.ics')) return undefined;
  const secret = file.slice(0, -'.ics'.length);
  return SECRET_PATTERN.test(secret) ? secret : undefined;
}
