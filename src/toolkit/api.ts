/** Every API route lives under this prefix (the version is in the path). */
export const API_PREFIX = '/api/v1';

/** Largest request body, in bytes; larger bodies answer 413. */
export const BODY_LIMIT = 1024 * 1024;
/** BODY_LIMIT as people read it, for messages and the OpenAPI document. */
export const BODY_LIMIT_LABEL = `${BODY_LIMIT / (1024 * 1024)} MiB`;

/** The `Location` of a record created under API_PREFIX, e.g. `/api/v1/tasks/7`. */
export const locationOf = (collection: string, id: number | string) => `${API_PREFIX}/${collection}/${id}`;

/**
 * A page of a list stops growing once its records add up to about this many bytes, and
 * next_cursor continues it: however large its records are (each is bounded by the field
 * limits), a list answer stays far below 16 MiB and within its time budget
 * (docs/security.md, "Cost of a request").
 */
export const PAGE_BYTE_BUDGET = 2 * 1024 * 1024;

/**
 * The first items whose sizes add up to at most PAGE_BYTE_BUDGET, and always at least one.
 * `atMost` bounds `bytesOf` from above for less work: when the bounds add up to the budget
 * or less, the whole page fits and no exact size is computed (an ordinary page).
 */
export function withinPageBudget<T>(items: T[], bytesOf: (item: T) => number, atMost?: (item: T) => number): T[] {
  if (atMost !== undefined) {
    let bound = 0;
    for (const item of items) bound += atMost(item);
    if (bound <= PAGE_BYTE_BUDGET) return items;
  }
  let total = 0;
  for (let i = 0; i < items.length; i++) {
    total += bytesOf(items[i] as T);
    if (total > PAGE_BYTE_BUDGET && i > 0) return items.slice(0, i);
  }
  return items;
}

/** The bytes of a value as JSON text (UTF-8). */
export const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));

/**
 * At least jsonBytes of a string or null, without building a string: a UTF-16 unit takes at most six
 * bytes in JSON (`\u001f`, a lone surrogate), a pair of them four, plus the quotes.
 */
export const jsonStringBytesAtMost = (text: string | null): number => (text === null ? 4 : 6 * text.length + 2);
