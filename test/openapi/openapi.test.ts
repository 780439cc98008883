import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { validate } from '@readme/openapi-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { HOST_OR_HTTP_URL_FORMAT, isHostOrHttpUrl } from '../../src/toolkit/web-address.js';
import { beforeAll, expect, it } from 'vitest';
import { WEB_PAGES } from '../../src/app/webapp.plugin.js';
import { FEED_NAME_MAX, HANDLE_INPUT_PATTERN, PASSWORD_MAX, PASSWORD_MIN, SESSION_NAME_MAX, TASK_CONTEXT_MAX, TOKEN_NAME_MAX } from '../../web/src/rules.js';
import { READ_ONLY_FIELDS } from '../../src/toolkit/schema-helpers.js';
import { describeEachDialect, useTestApp } from '../helpers/harness.js';
import { ROOT } from '../helpers/server-process.js';

/*
 * The published OpenAPI document against the running app: valid 3.1, every route
 * Fastify registered is documented (and nothing else), security matches what the
 * auth hook enforces, and documented schemas describe real responses.
 */

type Schema = Record<string, unknown> & { $ref?: string; properties?: Record<string, Schema>; examples?: unknown[]; readOnly?: boolean; enum?: unknown[] };
interface Media {
  schema: Schema;
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
}
interface Operation {
  operationId?: string;
  security?: Record<string, string[]>[];
  parameters?: { in: string; name: string; required?: boolean; schema: Schema; example?: unknown; examples?: Record<string, { value: unknown }> }[];
  requestBody?: { required?: boolean; content: Record<string, Media> };
  responses: Record<string, { description: string; headers?: Record<string, { $ref?: string }>; content?: Record<string, Media> }>;
  summary?: string;
  description?: string;
  tags?: string[];
}
interface Document {
  openapi: string;
  info: { version: string; contact?: { name?: string; url?: string }; license?: { name: string; identifier?: string } };
  security?: Record<string, string[]>[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, Schema>;
    headers: Record<string, { schema: Schema; example?: unknown }>;
    securitySchemes: Record<string, Record<string, unknown>>;
  };
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace']);

/**
 * Every "METHOD /path" Fastify registered, read from its own route tree. HEAD is
 * Fastify's automatic twin of GET; the Swagger UI's static files under /docs are
 * the UI, not the API.
 */
const WEB_APP_PATHS = new Set<string>([...WEB_PAGES, '/assets/:file']);

function registeredRoutes(tree: string): Set<string> {
  const out = new Set<string>();
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^((?:[│ ] {3})*)[├└]── (.*?) \(([A-Z, ]+)\)$/.exec(line);
    if (match === null) continue;
    const depth = (match[1] as string).length / 4;
    stack.length = depth;
    stack.push(match[2] as string);
    const path = stack.join('');
    for (const method of (match[3] as string).split(', ')) {
      // /docs and the web app's pages are for browsers; /oauth/*: RFC 8628 form bodies and `{"error"}` answers, outside the document's conventions (docs/api.md describes them).
      if (method === 'HEAD' || /^\/docs(?:$|\/|\*)/.test(path) || WEB_APP_PATHS.has(path) || path.startsWith('/oauth/')) continue;
      out.add(`${method} ${path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`);
    }
  }
  return out;
}

function operations(doc: Document): [string, string, Operation][] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.has(method))
      .map(([method, op]): [string, string, Operation] => [method, path, op]),
  );
}

const isProtected = (path: string) => path.startsWith('/api/v1/') && path !== '/api/v1/openapi.json';

/** Response headers HTTP itself adds, described by the media type or the protocol rather than per response. */
const TRANSPORT_HEADERS = new Set(['content-type', 'content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding']);

describeEachDialect('OpenAPI document', (dialect) => {
  // Rate limiting on, so that the RateLimit headers it adds are checked against the document too.
  const t = useTestApp(dialect, { alice: [1] }, { RATE_LIMIT: '1000' });
  let doc: Document;

  beforeAll(async () => {
    const res = await t.anonymous.get('/api/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    doc = res.body as Document;
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid ? [] : result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
  });

  it('documents exactly the routes Fastify registered', () => {
    const registered = registeredRoutes(t.app.printRoutes({ commonPrefix: false }));
    const documented = new Set(operations(doc).map(([method, path]) => `${method.toUpperCase()} ${path}`));
    expect(registered.size).toBeGreaterThan(15);
    expect([...documented].sort()).toEqual([...registered].sort());
    for (const [method, path] of operations(doc)) {
      expect(t.app.hasRoute({ method: method.toUpperCase(), url: path.replace(/\{(\w+)\}/g, ':$1') }), `${method} ${path}`).toBe(true);
    }
  });

  it('requires the bearer token exactly where the auth hook does', async () => {
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const [method, path, op] of operations(doc)) {
      const security = op.security ?? doc.security ?? [];
      const res = await t.anonymous.request(method.toUpperCase(), path.replace(/\{\w+\}/g, '1'), method === 'get' || method === 'delete' ? undefined : {});
      if (isProtected(path)) {
        expect(security, `${method} ${path}`).toContainEqual({ bearer: [] });
        expect(op.responses['401'], `${method} ${path} documents 401`).toBeDefined();
        expect(res.status, `${method} ${path} without a token`).toBe(401);
      } else {
        expect(security, `${method} ${path}`).toEqual([]);
        expect(res.status, `${method} ${path} without a token`).not.toBe(401);
      }
    }
  });

  it('describes parameters, bodies, success and problem+json error responses', () => {
    for (const [method, path, op] of operations(doc)) {
      const where = `${method} ${path}`;
      expect(op.summary, where).toEqual(expect.any(String));
      expect(op.tags?.length, where).toBeGreaterThan(0);
      for (const name of [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1])) {
        expect(op.parameters?.find((p) => p.in === 'path' && p.name === name), `${where} path parameter ${name}`).toMatchObject({ required: true });
      }
      const codes = Object.keys(op.responses);
      // One success: a 2xx, or for the single sign-on steps a browser's redirect (302) alone; a session's PUT may also
      // answer 201 when `scope=following` splits off a new series (contract section 10).
      const success = codes.filter((c) => (c.startsWith('2') || c === '302') && !(where === 'put /api/v1/sessions/{id}' && c === '201'));
      expect(success, where).toHaveLength(1);
      const ok = op.responses[success[0] as string];
      if (success[0] === '204' || success[0] === '302') expect(ok?.content, `${where} ${success[0]} has no body`).toBeUndefined();
      // JSON, except the calendar feed (text/calendar), the event stream (text/event-stream) and the problem pages (text/html).
      else expect((ok?.content?.['application/json'] ?? ok?.content?.['text/calendar'] ?? ok?.content?.['text/event-stream'] ?? ok?.content?.['text/html'])?.schema, where).toBeDefined();
      for (const code of codes.filter((c) => /^[45]/.test(c))) {
        expect(op.responses[code]?.content, `${where} ${code}`).toEqual({
          'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } },
        });
      }
      if ((method === 'post' || method === 'put') && op.requestBody !== undefined) {
        expect(op.requestBody.required, where).toBe(true);
        expect(op.requestBody.content['application/json']?.schema, where).toBeDefined();
        for (const code of ['400', '413', '415', '422']) expect(codes, `${where} documents ${code}`).toContain(code);
      }
      if (op.parameters?.some((p) => p.in === 'query')) expect(codes, `${where} documents 422 for a bad query`).toContain('422');
    }
    const bodies = operations(doc).filter(([, , op]) => op.requestBody !== undefined).map(([m, p]) => `${m} ${p}`);
    expect(bodies.sort()).toEqual([
      'patch /api/v1/orgs/{id}/members/{handle}',
      'patch /api/v1/webhooks/{id}',
      'post /api/v1/calendar-feeds',
      'post /api/v1/device/approve',
      'post /api/v1/device/deny',
      'post /api/v1/me/tokens',
      'post /api/v1/sessions',
      'post /api/v1/tasks',
      'post /api/v1/tasks/bulk',
      'post /api/v1/webhooks',
      'post /auth/invites/accept',
      'post /auth/invites/preview',
      'post /auth/login',
      'put /api/v1/me',
      'put /api/v1/me/password',
      'put /api/v1/sessions/{id}',
      'put /api/v1/tasks/{id}',
    ]);
  });

  it('resolves every $ref to a component, and uses every component', () => {
    const refs = new Set([...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1] as string));
    expect(refs.size).toBeGreaterThan(0);
    for (const ref of refs) {
      const [, kind, name] = /^#\/components\/(schemas|headers)\/([A-Za-z-]+)$/.exec(ref) ?? [];
      expect(kind, ref).toBeDefined();
      expect(doc.components[kind as 'schemas' | 'headers'][name as string], ref).toBeDefined();
    }
    for (const name of Object.keys(doc.components.schemas)) expect(refs, `schema ${name} is used`).toContain(`#/components/schemas/${name}`);
    for (const name of Object.keys(doc.components.headers)) expect(refs, `header ${name} is used`).toContain(`#/components/headers/${name}`);
  });

  it('names the type of every request body, record and envelope, for generated clients', () => {
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(['Task', 'TaskCreate', 'TaskUpdate', 'TaskImport', 'TaskImportItem', 'TaskEnvelope', 'TaskList', 'TaskImportResult',
        'Session', 'SessionCreate', 'SessionUpdate', 'SessionEnvelope', 'SessionList', 'Participation', 'ParticipationEnvelope', 'WebsiteBlocker',
        'Occurrence', 'OccurrenceList', 'Me', 'MeEnvelope', 'MeUpdate', 'Problem', 'FieldError']),
    );
    for (const [method, path, op] of operations(doc)) {
      for (const media of Object.values(op.requestBody?.content ?? {})) expect(media.schema.$ref, `${method} ${path} body`).toMatch(/^#\/components\/schemas\//);
      for (const [status, response] of Object.entries(op.responses)) {
        if (path === '/api/v1/openapi.json' && status === '200') continue;
        for (const media of Object.values(response.content ?? {})) expect(media.schema.$ref, `${method} ${path} ${status}`).toMatch(/^#\/components\/schemas\//);
      }
    }
  });

  it('gives every operation an operationId, a summary and a description, and every response a description', () => {
    const ids = operations(doc).map(([, , op]) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const [method, path, op] of operations(doc)) {
      const where = `${method} ${path}`;
      expect(op.operationId, where).toMatch(/^[a-z][A-Za-z]+$/);
      expect(op.summary?.length, where).toBeGreaterThan(5);
      expect(op.description?.length, where).toBeGreaterThan(20);
      for (const [status, response] of Object.entries(op.responses)) {
        expect(response.description, `${where} ${status}`).not.toMatch(/^(?:Default Response)?$/);
      }
    }
  });

  it('states its version, contact and licence from package.json', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; license: string; author: string; homepage?: string };
    expect(doc.info.version).toBe(pkg.version);
    // No home page: the project owns no domain to point at.
    expect(pkg.homepage).toBeUndefined();
    expect(doc.info.contact).toEqual({ name: pkg.author });
    expect(doc.info.license).toEqual({ name: pkg.license, identifier: pkg.license });
  });

  const resolve = (schema: Schema): Schema => (schema.$ref === undefined ? schema : resolve(doc.components.schemas[schema.$ref.split('/').pop() as string] as Schema));

  it('states the rules the web app checks before sending (web/src/rules.ts)', () => {
    const props = (name: string) => resolve(doc.components.schemas[name] as Schema).properties ?? {};
    for (const password of [props('ChangePasswordBody').new_password, props('AcceptInviteBody').password]) {
      expect(password).toMatchObject({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX });
    }
    const server = new RegExp(String(props('AcceptInviteBody').handle?.pattern));
    const form = new RegExp(`^(?:${HANDLE_INPUT_PATTERN})$`, 'v');
    for (const handle of ['dana', 'a.b_c-9', 'x'.repeat(64), 'x'.repeat(65), '', 'Dana', 'da na', 'dä', 'a/b']) {
      expect(form.test(handle), handle).toBe(server.test(handle));
    }
    const texts: [string, string, number][] = [['SessionCreate', 'name', SESSION_NAME_MAX], ['TaskCreate', 'context', TASK_CONTEXT_MAX], ['CalendarFeedCreate', 'name', FEED_NAME_MAX], ['CreateTokenBody', 'name', TOKEN_NAME_MAX]];
    for (const [body, field, max] of texts) expect(props(body)[field]?.['x-message'], `${body}.${field}`).toMatch(new RegExp(`^must be 1–${max} characters`));
  });

  it('keeps read-only fields and defaults out of request bodies, naming the ignored fields there (plain code generation)', () => {
    const ignored = (name: string) => /Read-only fields sent anyway are ignored: (.*)\.$/.exec(doc.components.schemas[name]?.description as string)?.[1]?.split(', ');
    for (const name of ['TaskCreate', 'TaskUpdate', 'TaskImport', 'TaskImportItem', 'SessionCreate', 'SessionUpdate']) {
      const properties = doc.components.schemas[name]?.properties ?? {};
      for (const field of READ_ONLY_FIELDS) expect(properties[field], `${name}.${field}`).toBeUndefined();
      expect(ignored(name), name).toEqual(expect.arrayContaining(READ_ONLY_FIELDS.map((field) => `\`${field}\``)));
    }
    // On an update the origin and session are fixed: ignored, so read-only there.
    expect(ignored('TaskUpdate')).toEqual(expect.arrayContaining(['`source`', '`source_id`', '`session_id`']));
    expect(doc.components.schemas.SessionCreate?.properties?.is_public?.description).toBe('Default: `false`.');
    const requests = new Set(['MeUpdate', 'TaskUpdate', 'CalendarFeedCreate', 'TaskImport', 'TaskImportItem', 'WebhookCreate', 'SessionUpdate', 'SessionCreate', 'TaskCreate']);
    const defaults = (schema: unknown, where: string): string[] =>
      typeof schema !== 'object' || schema === null
        ? []
        : Object.entries(schema).flatMap(([key, value]) => (key === 'default' ? [where] : key === 'examples' ? [] : defaults(value, `${where}/${key}`)));
    for (const name of requests) expect(defaults(doc.components.schemas[name], name)).toEqual([]);
    for (const name of ['Task', 'Session']) {
      const properties = doc.components.schemas[name]?.properties ?? {};
      const readOnly = Object.keys(properties).filter((field) => properties[field]?.readOnly === true).sort();
      expect(readOnly, name).toEqual(READ_ONLY_FIELDS.filter((field) => field in properties).sort());
    }
  });

  it('keeps in each record the enum of every field its create body restricts', () => {
    const enums = (schema: Schema): unknown[] | undefined => {
      const plain = resolve(schema);
      if (plain.enum !== undefined) return plain.enum;
      const anyOf = (plain.anyOf ?? []) as Schema[];
      const lists = anyOf.map((s) => enums(s) ?? (resolve(s).type === 'null' ? [null] : undefined));
      return anyOf.length > 0 && lists.every((l) => l !== undefined) ? lists.flat() : undefined;
    };
    let compared = 0;
    const compare = (input: Schema, output: Schema, where: string) => {
      const wanted = enums(input);
      if (wanted !== undefined) {
        compared++;
        expect(enums(output), where).toEqual(expect.arrayContaining(wanted.filter((v) => v !== null)));
      }
      const inner = (s: Schema) => resolve(((resolve(s).anyOf as Schema[] | undefined) ?? []).find((a) => resolve(a).type === 'object') ?? s);
      for (const [field, schema] of Object.entries(inner(input).properties ?? {})) {
        const answered = inner(output).properties?.[field];
        if (answered !== undefined) compare(schema, answered, `${where}.${field}`);
      }
    };
    compare({ $ref: '#/components/schemas/SessionCreate' }, { $ref: '#/components/schemas/Session' }, 'Session');
    compare({ $ref: '#/components/schemas/TaskCreate' }, { $ref: '#/components/schemas/Task' }, 'Task');
    // type, status, website_blocker.mode, is_recurring, occurrence, recurring_month_*, fallback_option
    expect(compared).toBeGreaterThanOrEqual(8);
  });

  it('has examples that validate against their schemas, and request examples without read-only fields', () => {
    const ajv = addFormats.default(new Ajv2020({ strict: false, allErrors: true })).addFormat(HOST_OR_HTTP_URL_FORMAT, isHostOrHttpUrl);
    ajv.addSchema({ $id: 'https://focus.test/openapi.json', components: doc.components });
    let checked = 0;
    const check = (schema: unknown, value: unknown, where: string, request: boolean) => {
      const validate = ajv.compile({ $id: `https://focus.test/example/${checked++}`, ...rebase(schema) });
      expect(validate(value), `${where}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(value)}`).toBe(true);
      if (request && typeof value === 'object' && value !== null) {
        const properties = resolve(schema as Schema).properties ?? {};
        const readOnly = Object.keys(value).filter((field) => properties[field]?.readOnly === true);
        expect(readOnly, `${where} sends read-only fields`).toEqual([]);
      }
    };
    const mediaExamples = (media: Media) => [...(media.example === undefined ? [] : [media.example]), ...Object.values(media.examples ?? {}).map((e) => e.value)];
    const walkSchemaExamples = (schema: unknown, where: string, request: boolean): void => {
      if (Array.isArray(schema)) return schema.forEach((s, i) => walkSchemaExamples(s, `${where}/${i}`, request));
      if (typeof schema !== 'object' || schema === null) return;
      const s = schema as Schema;
      for (const example of s.examples ?? []) check(s, example, `${where} examples`, request);
      for (const [key, value] of Object.entries(s)) if (key !== 'examples' && key !== 'default') walkSchemaExamples(value, `${where}/${key}`, request);
    };
    const requestBodies = new Set<string>();
    for (const [method, path, op] of operations(doc)) {
      for (const media of Object.values(op.requestBody?.content ?? {})) {
        const examples = mediaExamples(media);
        expect(examples.length, `${method} ${path}: "Try it out" starts from an example`).toBeGreaterThan(0);
        for (const example of examples) check(media.schema, example, `${method} ${path} body`, true);
        if (media.schema.$ref !== undefined) requestBodies.add(media.schema.$ref.split('/').pop() as string);
      }
      for (const p of op.parameters ?? []) {
        for (const example of [...(p.example === undefined ? [] : [p.example]), ...Object.values(p.examples ?? {}).map((e) => e.value)]) {
          check(p.schema, example, `${method} ${path} ${p.in} ${p.name}`, false);
        }
      }
      for (const [status, response] of Object.entries(op.responses)) {
        for (const media of Object.values(response.content ?? {})) for (const example of mediaExamples(media)) check(media.schema, example, `${method} ${path} ${status}`, false);
      }
    }
    for (const [name, schema] of Object.entries(doc.components.schemas)) walkSchemaExamples(schema, name, requestBodies.has(name));
    for (const [name, header] of Object.entries(doc.components.headers)) if (header.example !== undefined) check(header.schema, header.example, `header ${name}`, false);
    expect(requestBodies.size).toBe(15);
    expect(checked).toBeGreaterThan(30);
  });

  it('every body operation answers an unknown field with the 422 it documents', async () => {
    const session = await t.alice.post<{ data: { id: number } }>('/api/v1/sessions', { org_id: 1, name: 'Focus', type: 'standard', duration: 25, schedule: '2026-12-01', time: '9:00 AM' });
    const task = await t.alice.post<{ data: { id: string } }>('/api/v1/tasks', { context: 'Write', session_id: session.body.data.id });
    const ids: Record<string, string> = { '/api/v1/sessions/{id}': String(session.body.data.id), '/api/v1/tasks/{id}': task.body.data.id };
    for (const [method, path, op] of operations(doc).filter(([, , o]) => o.requestBody !== undefined)) {
      const res = await t.alice.request<{ errors: unknown[] }>(method.toUpperCase(), path.replace('{id}', ids[path] ?? '1').replace('{handle}', 'alice'), { surely_not_a_field: 1 });
      expect(res.status, `${method} ${path}`).toBe(422);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(op.responses['422']).toBeDefined();
      expect(res.body.errors, `${method} ${path}`).toContainEqual({ path: '/surely_not_a_field', message: 'unknown field' });
    }
  });

  it('describes the responses the app really sends', async () => {
    const ajv = addFormats.default(new Ajv2020({ strict: false, allErrors: true })).addFormat(HOST_OR_HTTP_URL_FORMAT, isHostOrHttpUrl);
    ajv.addSchema({ $id: 'https://focus.test/openapi.json', components: doc.components });
    const headersSeen = new Set<string>();
    const check = (method: string, path: string, status: number, body: unknown, headers: Record<string, unknown> = {}) => {
      const response = doc.paths[path]?.[method]?.responses[String(status)];
      const schema = response?.content?.[status >= 400 ? 'application/problem+json' : 'application/json']?.schema;
      if (status !== 204 && status !== 304) {
        expect(schema, `${method} ${path} ${status} is documented`).toBeDefined();
        const id = `https://focus.test/${method}${path}/${status}`;
        const validate = ajv.getSchema(id) ?? ajv.compile({ $id: id, ...rebase(schema) });
        expect(validate(body), `${method} ${path} ${status}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      }
      // Every header the app sends is declared on that response.
      const declared = Object.keys(response?.headers ?? {}).map((h) => h.toLowerCase());
      for (const header of Object.keys(headers).filter((h) => !TRANSPORT_HEADERS.has(h))) {
        headersSeen.add(header);
        expect(declared, `${method} ${path} ${status} declares ${header}`).toContain(header);
      }
    };

    const created = await t.alice.post<{ data: { id: number } }>('/api/v1/sessions', {
      org_id: 1,
      name: 'Weekly review',
      type: 'drop-in',
      duration: 45,
      schedule: '2026-12-01',
      time: '4:30 PM',
      is_recurring: 1,
      occurrence: 'weekly',
      recurring_days: [2, 4],
      website_blocker_enabled: true,
      website_blocker: { mode: 'custom', category: ['social'], urls: ['news.example.com'] },
    });
    check('post', '/api/v1/sessions', created.status, created.body, created.headers);
    const id = created.body.data.id;
    const one = await t.alice.get(`/api/v1/sessions/${id}`);
    check('get', '/api/v1/sessions/{id}', one.status, one.body, one.headers);
    const unchanged = await t.alice.request('GET', `/api/v1/sessions/${id}`, undefined, { 'if-none-match': String(one.headers.etag) });
    expect(unchanged.status).toBe(304);
    check('get', '/api/v1/sessions/{id}', unchanged.status, unchanged.body, unchanged.headers);
    const list = await t.alice.get<{ data: unknown[] }>('/api/v1/sessions?day_start=2026-12-01&day_ends=2026-12-10');
    check('get', '/api/v1/sessions', list.status, list.body, list.headers);
    expect(list.body.data.length).toBeGreaterThan(1);
    const joined = await t.alice.post(`/api/v1/sessions/${id}/join`);
    check('post', '/api/v1/sessions/{id}/join', joined.status, joined.body, joined.headers);
    const bulk = await t.alice.post<{ data: { id: string }[] }>('/api/v1/tasks/bulk', { session_id: id, tasks: [{ context: 'Inbox zero', source: 'linear', source_id: 7 }, { context: 'Triage', source: 'linear', source_id: 'ENG-7' }] });
    check('post', '/api/v1/tasks/bulk', bulk.status, bulk.body, bulk.headers);
    const replayed = await t.alice.request('POST', '/api/v1/tasks', { context: 'Once', session_id: id }, { 'idempotency-key': 'openapi-test' });
    const again = await t.alice.request('POST', '/api/v1/tasks', { context: 'Once', session_id: id }, { 'idempotency-key': 'openapi-test' });
    expect(again.headers['idempotent-replayed']).toBe('true');
    check('post', '/api/v1/tasks', replayed.status, replayed.body, replayed.headers);
    check('post', '/api/v1/tasks', again.status, again.body, again.headers);
    const tasks = await t.alice.get('/api/v1/tasks');
    check('get', '/api/v1/tasks', tasks.status, tasks.body, tasks.headers);
    const me = await t.alice.get('/api/v1/me');
    check('get', '/api/v1/me', me.status, me.body, me.headers);
    const moved = await t.alice.put('/api/v1/me', { timezone: 'UTC' });
    check('put', '/api/v1/me', moved.status, moved.body, moved.headers);
    const invalid = await t.alice.post('/api/v1/tasks', { context: ' ', session_id: id });
    check('post', '/api/v1/tasks', invalid.status, invalid.body, invalid.headers);
    const missing = await t.alice.get('/api/v1/tasks/999999');
    check('get', '/api/v1/tasks/{id}', missing.status, missing.body, missing.headers);
    const anonymous = await t.anonymous.get('/api/v1/tasks');
    check('get', '/api/v1/tasks', anonymous.status, anonymous.body, anonymous.headers);
    for (const path of ['/healthz', '/readyz', '/api/v1/openapi.json']) {
      const res = await t.anonymous.get(path);
      check('get', path, res.status, res.body, res.headers);
    }
    const deleted = await t.alice.delete(`/api/v1/tasks/${bulk.body.data[0]?.id ?? 'missing'}`);
    expect(deleted.status).toBe(204);
    check('delete', '/api/v1/tasks/{id}', deleted.status, deleted.body, deleted.headers);
    expect([...headersSeen].sort()).toEqual(
      expect.arrayContaining(['etag', 'idempotent-replayed', 'location', 'ratelimit', 'ratelimit-policy', 'www-authenticate', 'x-request-id']),
    );
  });

  it('serves the interactive documentation at /docs without a token', async () => {
    const res = await t.anonymous.get('/docs');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toMatch(/swagger-ui/i);
  });
});

/** Points the document's local refs at the registered copy of its components. */
function rebase(schema: unknown): Record<string, unknown> {
  return JSON.parse(
    JSON.stringify(schema).replace(/"\$ref":"#\/components\//g, '"$ref":"https://focus.test/openapi.json#/components/'),
  ) as Record<string, unknown>;
}
