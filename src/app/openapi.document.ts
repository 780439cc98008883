import { nameOf, namedSchema } from '../toolkit/openapi.js';

/*
 * Turns the routes' own schemas into the published document: named schemas (toolkit
 * `Named`) become components referenced wherever they are used, and the response headers
 * that cross-cutting plugins add are declared once, as header components, on every
 * response that carries them. Pure functions over JSON; the plugin wires them into
 * @fastify/swagger's `transform` (per route) and `transformObject` (the whole document).
 */

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const mapEntries = (object: Json, fn: (key: string, value: unknown) => unknown): Json => Object.fromEntries(Object.entries(object).map(([k, v]) => [k, fn(k, v)]));
const mapValues = (object: Json, fn: (value: unknown) => unknown): Json => mapEntries(object, (_, v) => fn(v));

const SCHEMAS = '#/components/schemas/';
const HEADERS = '#/components/headers/';

const VALUE_KEYWORDS = new Set(['examples', 'example', 'enum', 'const', 'default']);

/** The components of one document, filled while its routes are documented. */
export type Components = Map<string, unknown>;

/** Whether each component was written as a request body's or a response's: never both (see requestView). */
const uses = new WeakMap<Components, Map<string, 'request' | 'response'>>();

/**
 * A copy of `schema` for the document in which every named schema (other than the
 * component `self` being written) is a reference, its component added to `components`.
 * `request`: the schema of a request body, shown as requestView says.
 */
export function documented(schema: unknown, components: Components, self?: string, request = false): unknown {
  if (Array.isArray(schema)) return schema.map((item) => documented(item, components, undefined, request));
  if (!isObject(schema)) return schema;
  const name = nameOf(schema);
  if (name !== undefined && name !== self) {
    const use = request ? 'request' : 'response';
    const known = uses.get(components) ?? new Map<string, 'request' | 'response'>();
    uses.set(components, known);
    if (known.get(name) !== undefined && known.get(name) !== use) throw new Error(`${name} is both a request body's and a response's schema: name a copy for one of them`);
    known.set(name, use);
    if (!components.has(name)) {
      components.set(name, {}); // a schema that refers to itself finds its name taken
      components.set(name, documented(namedSchema(name), components, name, request));
    }
    // A record's server-set field keeps its readOnly beside the reference (OpenAPI 3.1 allows it).
    return schema.readOnly === true ? { $ref: SCHEMAS + name, readOnly: true } : { $ref: SCHEMAS + name };
  }
  if (!request) return mapValues(schema, (value) => documented(value, components));
  // Values (examples, enums, a default) are data, not schemas: copied as they are.
  return requestView(mapEntries(schema, (key, value) => (VALUE_KEYWORDS.has(key) ? value : documented(value, components, undefined, true))));
}

/**
 * What a request body shows, so that plain code generation (`npx openapi-typescript`, no
 * options) types it as sent (contract section 14): a `default` is stated in the description
 * rather than as a keyword (generators make a field with a default required), and the
 * read-only fields a body accepts and ignores (section 6) are named there instead of listed
 * as properties (they would be typed `unknown`). Validation keeps the routes' own schemas.
 */
function requestView(schema: Json): Json {
  const out = { ...schema };
  const notes: string[] = [];
  if ('default' in out) {
    notes.push(`Default: \`${JSON.stringify(out.default)}\`.`);
    delete out.default;
  }
  if (isObject(out.properties)) {
    const ignored = Object.keys(out.properties).filter((key) => isObject((out.properties as Json)[key]) && ((out.properties as Json)[key] as Json).readOnly === true);
    if (ignored.length > 0) {
      out.properties = Object.fromEntries(Object.entries(out.properties).filter(([key]) => !ignored.includes(key)));
      if (Array.isArray(out.required)) out.required = out.required.filter((key) => !ignored.includes(key as string));
      notes.push(`Read-only fields sent anyway are ignored: ${ignored.map((key) => `\`${key}\``).join(', ')}.`);
    }
  }
  if (notes.length > 0) out.description = [typeof out.description === 'string' ? out.description : '', ...notes].filter((text) => text !== '').join(' ');
  return out;
}

/** A route's schema as the document shows it: bodies and responses refer to components. */
export function documentedRoute(schema: Json, components: Components): Json {
  const out = { ...schema };
  if (schema.body !== undefined) out.body = documented(schema.body, components, undefined, true);
  if (isObject(schema.response)) {
    out.response = mapValues(schema.response, (response) =>
      isObject(response) && isObject(response.content)
        ? { ...response, content: mapValues(response.content, (media) => (isObject(media) ? { ...media, schema: documented(media.schema, components) } : media)) }
        : documented(response, components),
    );
  }
  return out;
}

/** Declared once; a response refers to the ones it carries. */
export const RESPONSE_HEADERS = {
  'x-request-id': {
    description: 'Names this request in the server logs; quote it when reporting a problem. A client’s own `x-request-id` is echoed when it is safe to log.',
    schema: { type: 'string' },
  },
  RateLimit: {
    description:
      'What is left of the budget this request was charged to (IETF RateLimit header fields): `"<policy>";r=<requests left>;t=<seconds until the window resets>`. ' +
      'The policy is `token` (a valid token) or `address` (no or a failed token). Absent when rate limiting is off.',
    schema: { type: 'string' },
    example: '"token";r=599;t=60',
  },
  'RateLimit-Policy': {
    description: 'The budget: `"<policy>";q=<requests>;w=<window in seconds>`, per token (or per client address). Absent when rate limiting is off.',
    schema: { type: 'string' },
    example: '"token";q=600;w=60',
  },
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 1 }, example: 1 },
  Location: { description: 'Where the created record is.', schema: { type: 'string', format: 'uri-reference' }, example: '/api/v1/tasks/12' },
  'WWW-Authenticate': {
    description: 'The bearer challenge (RFC 6750); `error="invalid_token"` when a bearer token was sent (`Authorization: Bearer <something>`).',
    schema: { type: 'string' },
    example: 'Bearer realm="focus", error="invalid_token"',
  },
  ETag: { description: 'Strong entity tag of this body (a hash of its bytes); send it in `If-None-Match`.', schema: { type: 'string' }, example: '"kq3vW4d8Zs0rC1n2p5t7x9yB6mA0eH4jL3oQ8uR2iT0"' },
  'Idempotent-Replayed': {
    description: 'Present when this is the stored response to an earlier request with the same Idempotency-Key.',
    schema: { type: 'string', enum: ['true'] },
  },
} as const;

type HeaderName = keyof typeof RESPONSE_HEADERS;
const headerNames = new Map(Object.keys(RESPONSE_HEADERS).map((name) => [name.toLowerCase(), name as HeaderName]));

/** The headers a response carries by the rules of the plugins that set them (beyond those its route declares). */
function carried(path: string, status: string, rateLimited: (path: string) => boolean): [HeaderName, string?][] {
  const out: [HeaderName, string?][] = [['x-request-id']];
  if (rateLimited(path)) out.push(['RateLimit'], ['RateLimit-Policy']);
  if (status === '201') out.push(['Location']);
  if (status === '401') out.push(['WWW-Authenticate']);
  if (status === '429' || status === '503') out.push(['Retry-After']);
  if (status === '409') out.push(['Retry-After', 'On `idempotency-key-in-flight`: seconds to wait before retrying.']);
  return out;
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace']);

/**
 * The finished document: the collected components, the header components, every
 * response's headers as references, and each request body's examples (those of its
 * component) on its media type, where "Try it out" takes them from.
 */
export function finishedDocument(doc: Json, components: Components, rateLimited: (path: string) => boolean): Json {
  const schemas = { ...(doc.components as { schemas?: Json } | undefined)?.schemas, ...Object.fromEntries([...components].sort(([a], [b]) => a.localeCompare(b))) };
  const paths = Object.fromEntries(
    Object.entries((doc.paths ?? {}) as Json).map(([path, item]) => [
      path,
      !isObject(item)
        ? item
        : mapEntries(item, (method, op) => (METHODS.has(method) && isObject(op) ? finishedOperation(op, schemas, (status) => carried(path, status, rateLimited)) : op)),
    ]),
  );
  return { ...doc, paths, components: { ...(doc.components as Json), schemas, headers: RESPONSE_HEADERS } };
}

function finishedOperation(op: Json, schemas: Json, headersFor: (status: string) => [HeaderName, string?][]): Json {
  const out = { ...op };
  const body = op.requestBody;
  if (isObject(body) && isObject(body.content)) {
    out.requestBody = { ...body, content: mapValues(body.content, (media) => withExamples(media, schemas)) };
  }
  if (isObject(op.responses)) {
    out.responses = Object.fromEntries(
      Object.entries(op.responses).map(([status, response]) => {
        if (!isObject(response)) return [status, response];
        const headers: Json = {};
        for (const [name, header] of Object.entries(isObject(response.headers) ? response.headers : {})) {
          const known = headerNames.get(name.toLowerCase());
          headers[known ?? name] = known === undefined ? header : { $ref: HEADERS + known };
        }
        for (const [name, description] of headersFor(status)) headers[name] = { $ref: HEADERS + name, ...(description === undefined ? {} : { description }) };
        return [status, { ...response, headers }];
      }),
    );
  }
  return out;
}

/** A media type whose schema refers to a component with examples shows them, named as @fastify/swagger names inline ones. */
function withExamples(media: unknown, schemas: Json): unknown {
  if (!isObject(media) || !isObject(media.schema) || typeof media.schema.$ref !== 'string' || media.examples !== undefined) return media;
  const component = schemas[media.schema.$ref.slice(SCHEMAS.length)];
  const examples: unknown[] = isObject(component) && Array.isArray(component.examples) ? component.examples : [];
  if (examples.length === 0) return media;
  return { ...media, examples: Object.fromEntries(examples.map((value, i) => [`example${i + 1}`, { value }])) };
}
