import fc from 'fast-check';
import { HOST_OR_HTTP_URL_FORMAT, isHostOrHttpUrl } from '../../src/toolkit/web-address.js';

/*
 * fast-check arbitraries from the JSON Schema subset our OpenAPI document uses
 * (TypeBox output as @fastify/swagger prints it). No maintained package turns a
 * JSON Schema into fast-check arbitraries (json-schema-faker has its own random
 * source, so no seeds or shrinking), hence this small walker.
 */
export type Schema = {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  maxProperties?: number;
  propertyNames?: Schema;
};

export type Resolve = (ref: string) => Schema;

const DAY_MS = 86_400_000;
/** Calendar dates 2000–2099 (always real days). */
export const calendarDate = fc.integer({ min: 10_957, max: 47_481 }).map((d) => new Date(d * DAY_MS).toISOString().slice(0, 10));
const instant = fc.integer({ min: 946_684_800_000, max: 4_102_444_800_000 }).map((ms) => new Date(ms).toISOString());

/**
 * A read-only field a client may echo back: any JSON, small. Keys `__proto__` and
 * `constructor` are refused on purpose (prototype poisoning), so they are not "valid".
 */
const anyJson = fc.jsonValue({ maxDepth: 2 }).filter((v) => !/"(?:__proto__|constructor)"|\\u0000/.test(JSON.stringify(v)));

/** Host names (internationalized ones too) and http(s) URLs, as `isHostOrHttpUrl` accepts them. */
const hostOrHttpUrl = fc
  .oneof(
    fc.domain(),
    fc.webUrl({ validSchemes: ['http', 'https'], withQueryParameters: true, withFragments: true }),
    fc.constantFrom('münchen.de', 'xn--mnchen-3ya.de', 'https://bücher.example:8443/straße?q=ä', 'http://[::1]:65535/'),
  )
  .filter(isHostOrHttpUrl);

function stringArb(s: Schema): fc.Arbitrary<string> {
  if (s.format === 'date') return calendarDate;
  if (s.format === 'date-time') return instant;
  if (s.format === HOST_OR_HTTP_URL_FORMAT) return hostOrHttpUrl.filter((v) => v.length <= (s.maxLength ?? Number.POSITIVE_INFINITY));
  const min = s.minLength ?? 0;
  const max = Math.min(s.maxLength ?? 40, Math.max(min, 40));
  // U+0000 is refused in all text (PostgreSQL cannot store it), whatever the schema says.
  const fits = (v: string) => v.length >= min && v.length <= (s.maxLength ?? Number.POSITIVE_INFINITY) && !v.includes('\u0000');
  if (s.pattern !== undefined) return fc.stringMatching(new RegExp(s.pattern)).filter(fits);
  return fc.string({ minLength: min, maxLength: max, unit: 'binary' }).filter(fits);
}

/** An arbitrary of values valid against `schema`. */
export function valid(schema: Schema, resolve: Resolve): fc.Arbitrary<unknown> {
  if (schema.$ref !== undefined) return valid(resolve(schema.$ref), resolve);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum !== undefined) {
    const types = [schema.type ?? []].flat();
    return fc.constantFrom(...schema.enum, ...(types.includes('null') && !schema.enum.includes(null) ? [null] : []));
  }
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives !== undefined) return fc.oneof(...alternatives.map((a) => valid(a, resolve)));
  if (Array.isArray(schema.type)) return fc.oneof(...schema.type.map((type) => valid({ ...schema, type }, resolve)));
  switch (schema.type) {
    case undefined:
      return anyJson;
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -1_000_000, max: Math.min(schema.maximum ?? 1_000_000, Number.MAX_SAFE_INTEGER) });
    case 'number':
      return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true });
    case 'string':
      return stringArb(schema);
    case 'array': {
      const items = valid(schema.items ?? {}, resolve);
      const constraints = { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 8, Math.max(schema.minItems ?? 0, 8)) };
      return schema.uniqueItems === true ? fc.uniqueArray(items, { ...constraints, selector: (v) => JSON.stringify(v) }) : fc.array(items, constraints);
    }
    case 'object': {
      const properties = schema.properties ?? {};
      const required = schema.required ?? [];
      if (Object.keys(properties).length === 0 && typeof schema.additionalProperties === 'object') {
        // The JSON parser refuses these keys on purpose (prototype poisoning, a documented 400).
        const key = stringArb({ type: 'string', minLength: 1, maxLength: 20, ...schema.propertyNames }).filter(
          (k) => k !== '__proto__' && k !== 'constructor',
        );
        return fc.dictionary(key, valid(schema.additionalProperties, resolve), { maxKeys: Math.min(schema.maxProperties ?? 5, 5) });
      }
      const model = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, valid(v, resolve)]));
      return fc.record(model, { requiredKeys: required.filter((k) => k in properties) });
    }
    default:
      throw new Error(`no arbitrary for schema type ${String(schema.type)}`);
  }
}

/** The JSON types a schema accepts at its top level (undefined: anything). */
export function acceptedTypes(schema: Schema, resolve: Resolve): Set<string> | undefined {
  if (schema.$ref !== undefined) return acceptedTypes(resolve(schema.$ref), resolve);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives !== undefined) {
    const all = new Set<string>();
    for (const a of alternatives) {
      const t = acceptedTypes(a, resolve);
      if (t === undefined) return undefined;
      for (const x of t) all.add(x);
    }
    return all;
  }
  if (schema.type === undefined) return schema.enum === undefined ? undefined : new Set(schema.enum.map((v) => (v === null ? 'null' : typeof v)));
  const types = new Set([schema.type].flat());
  if (types.has('integer')) types.add('number');
  return types;
}

/** Values of every JSON type, to put where a schema wants another type. */
export const SAMPLES: Record<string, unknown> = {
  string: 'fuzz',
  number: 1.5,
  boolean: true,
  null: null,
  array: [1, 'two'],
  object: { nested: true },
};

/** Strings that break a format or an enum: odd Unicode, malformed dates, control characters. */
export const ODD_STRINGS = [
  '',
  ' ',
  '\u0000',
  '\ud800',
  '\u202e\u0041',
  '𝕏𝕏𝕏',
  'é',
  '2026-02-30',
  '2026-13-01',
  '26-1-1',
  '2026-1-01',
  '２０２６-０１-０１',
  '25:00 PM',
  '9:00',
  '1e3',
  '0x10',
  '-0',
  'NaN',
  'null',
];
