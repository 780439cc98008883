import { type Static, type TSchema, Type, type TUnsafe } from 'typebox';
import { Named } from './openapi.js';

/** A string enum as plain `{type: string, enum}`: clearer errors and OpenAPI than a union of literals. */
export function StringEnum<const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

export function IntegerEnum<const T extends readonly number[]>(values: T, options: Record<string, unknown> = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'integer', enum: [...values], ...options });
}

export const Nullable = <T extends TSchema>(schema: T, options: Record<string, unknown> = {}) => Type.Union([schema, Type.Null()], options);

/**
 * `T` or null as ONE schema (`type: [t, "null"]`) rather than an anyOf: a bad value
 * then yields only the real rule it breaks, not also "must be null" from the other branch.
 */
export function OrNull<T extends TSchema>(schema: T, options: Record<string, unknown> = {}) {
  const plain = schema as unknown as { type: string; enum?: unknown[] };
  return Type.Unsafe<Static<T> | null>({
    ...plain,
    type: [plain.type, 'null'],
    ...(plain.enum === undefined ? {} : { enum: [...plain.enum, null] }),
    ...options,
  });
}

/**
 * Text of 1..max characters once surrounding white space is trimmed (JS `trim()`
 * and the regex `\s` agree on what white space is). Raw length is bounded too.
 */
export function TrimmedText(max: number, options: Record<string, unknown> = {}) {
  return Type.String({
    pattern: `^\\s*\\S(?:[\\s\\S]{0,${max - 2}}\\S)?\\s*$`,
    maxLength: max + 1000,
    'x-message': `must be 1–${max} characters after trimming`,
    ...options,
  });
}

/** C0, DEL and C1 control characters, as a regex class body. */
const CONTROL = '\\u0000-\\u001F\\u007F-\\u009F';

/** TrimmedText on one line: no control characters (C0, DEL, C1), so that it fits a header or a calendar's name. */
export function TrimmedLabel(max: number, options: Record<string, unknown> = {}) {
  return TrimmedText(max, {
    // TrimmedText's shape with every class short of control characters (no lookahead, which test generators cannot invert).
    pattern: `^[^\\S${CONTROL}]*[^\\s${CONTROL}](?:[^${CONTROL}]{0,${max - 2}}[^\\s${CONTROL}])?[^\\S${CONTROL}]*$`,
    'x-message': `must be 1–${max} characters after trimming, without control characters or line breaks`,
    ...options,
  });
}

export const CalendarDate = (options: Record<string, unknown> = {}) =>
  Type.String({
    format: 'date',
    pattern: '^\\d{4}-\\d{2}-\\d{2}$',
    'x-message': 'must be a real calendar date, YYYY-MM-DD',
    ...options,
  });

/** An IANA time zone name; whether the runtime knows it is checked past the schema, where a 422 can say so. */
export const TimeZoneName = (options: Record<string, unknown> = {}) =>
  Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone name.', examples: ['Europe/Berlin'], ...options });

export const PositiveId = (description: string, options: Record<string, unknown> = {}) =>
  Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description, ...options });

export const IdParams = Type.Object({ id: PositiveId('Numeric id.', { examples: [1] }) });

/** An instant as `Date.prototype.toISOString()` prints it. */
export const Instant = (options: Record<string, unknown> = {}) => Type.String({ format: 'date-time', ...options });

export const Cursor = Type.String({ minLength: 1, maxLength: 512, description: 'Opaque cursor from `next_cursor`.' });

/** The `next_cursor` of every list: pass it back as `cursor` for the next page; only null ends a listing. */
export const NextCursor = Nullable(Type.String(), { description: 'Pass back as `cursor` (same filters) for the next page; null at the end.' });

/** A success body holding one record, `{"data": …}`, named `name` in the OpenAPI document. */
export const Envelope = <T extends TSchema>(name: string, record: T, description: string) =>
  Named(name, Type.Object({ data: record }, { additionalProperties: false, description }));

/** A page of a listing, `{"data": […], "next_cursor": …}`, named `name` in the OpenAPI document. */
export const Page = <T extends TSchema>(name: string, item: T, description: string) =>
  Named(name, Type.Object({ data: Type.Array(item), next_cursor: NextCursor }, { additionalProperties: false, description }));

export const Limit = (max: number, fallback: number) =>
  Type.Integer({ minimum: 1, maximum: max, default: fallback, description: `Page size, 1–${max} (default ${fallback}).` });

/**
 * The read-only fields of every record (contract section 2). Sent in any body they are
 * ignored, never a 422 (section 6), so a record read back can be sent again.
 */
export const READ_ONLY_FIELDS = [
  'id', 'created_by', 'owner', 'created_at', 'updated_at', 'starts_at', 'ends_at', 'occurrence_date', 'participation', 'participants_count', 'rrule', 'phase',
  'split_from',
] as const;

/**
 * Read-only fields a client may echo back; accepted and ignored so a record read back can
 * be sent again. Declared `readOnly`, so generated request types leave them out.
 */
export function ReadOnlyIgnored<const K extends readonly string[]>(keys: K) {
  return Object.fromEntries(
    keys.map((k) => [k, Type.Optional(Type.Unknown({ readOnly: true, description: 'Read-only; ignored when sent.' }))]),
  ) as { [P in K[number]]: ReturnType<typeof Type.Optional<ReturnType<typeof Type.Unknown>>> };
}
