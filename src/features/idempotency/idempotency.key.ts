import { createHash } from 'node:crypto';

/*
 * The Idempotency-Key header (IETF httpapi idempotency-key draft, contract section 7):
 * 1–255 printable ASCII characters, sent as a structured-field string (`"…"`, as the
 * draft) or bare (as Stripe and most clients do). Both spellings name the same key.
 */

const SF_STRING = /^"((?:[\x20\x21\x23-\x5B\x5D-\x7E]|\\[\\"])*)"$/;
const BARE = /^[\x20-\x7E]+$/;
export const MAX_KEY_LENGTH = 255;

/** The key a header names, or undefined when the header is not a valid key. */
export function parseIdempotencyKey(header: string): string | undefined {
  const quoted = SF_STRING.exec(header);
  const key = quoted !== null ? (quoted[1] ?? '').replace(/\\([\\"])/g, '$1') : header.startsWith('"') || !BARE.test(header) ? undefined : header;
  return key !== undefined && key.length >= 1 && key.length <= MAX_KEY_LENGTH ? key : undefined;
}

/** JSON with object keys sorted: `{"a":1,"b":2}` and `{"b":2,"a":1}` are the same body. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    return `{${Object.keys(record)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * What "the same request" means for a key: method, path with query string, and the body
 * as JSON (key order and white space aside). `body` undefined: a route that takes none.
 */
export function requestFingerprint(method: string, url: string, body: unknown): string {
  return createHash('sha256')
    .update(`${method} ${url}\n`)
    .update(body === undefined ? '' : canonicalJson(body))
    .digest('base64url');
}
