import { validationFailed } from './errors.js';

/** Cursors are opaque to clients: base64url JSON of the last item's sort key. */
export function encodeCursor(key: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

/** Decodes a cursor made by encodeCursor with the given shape, or answers 422. */
export function decodeCursor<T extends readonly ('string' | 'number')[]>(
  cursor: string,
  shape: T,
): { [I in keyof T]: T[I] extends 'string' ? string : number } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const ok =
    Array.isArray(parsed) &&
    parsed.length === shape.length &&
    parsed.every(
      (v, i) =>
        typeof v === shape[i] &&
        // Every number a cursor holds (ids, positions, phases, milliseconds since 1970) is ≥ 0.
        (typeof v !== 'number' || (Number.isSafeInteger(v) && v >= 0)) &&
        // No cursor we issue holds U+0000, and PostgreSQL text cannot: a forged one would be a 500.
        (typeof v !== 'string' || !v.includes('\u0000')),
    );
  if (!ok) throw validationFailed([{ path: '/cursor', message: 'is not a cursor this listing issued' }]);
  return parsed as { [I in keyof T]: T[I] extends 'string' ? string : number };
}
