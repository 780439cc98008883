import { validate } from '@readme/openapi-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect, useTestApp } from '../helpers/harness.js';

/*
 * The published OpenAPI document against the running app: valid 3.1, every route
 * Fastify registered is documented (and nothing else), security matches what the
 * auth hook enforces, and documented schemas describe real responses.
 */

interface Operation {
  security?: Record<string, string[]>[];
  parameters?: { in: string; name: string; required?: boolean; schema?: object }[];
  requestBody?: { required?: boolean; content: Record<string, { schema: object }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: Record<string, unknown> }> }>;
  summary?: string;
  tags?: string[];
}
interface Document {
  openapi: string;
  security?: Record<string, string[]>[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, object>; securitySchemes: Record<string, Record<string, unknown>> };
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace']);

/**
 * Every "METHOD /path" Fastify registered, read from its own route tree. HEAD is
 * Fastify's automatic twin of GET; the Swagger UI's static files under /docs are
 * the UI, not the API.
 */
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
      if (method === 'HEAD' || /^\/docs(?:$|\/|\*)/.test(path)) continue;
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

describeEachDialect('OpenAPI document', (dialect) => {
  const t = useTestApp(dialect, { alice: [1] });
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
      const success = codes.filter((c) => c.startsWith('2'));
      expect(success, where).toHaveLength(1);
      const ok = op.responses[success[0] as string];
      if (success[0] === '204') expect(ok?.content, `${where} 204 has no body`).toBeUndefined();
      else expect(ok?.content?.['application/json']?.schema, where).toBeDefined();
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
    expect(bodies.sort()).toEqual(['post /api/v1/sessions', 'post /api/v1/tasks', 'post /api/v1/tasks/bulk', 'put /api/v1/me', 'put /api/v1/sessions/{id}', 'put /api/v1/tasks/{id}']);
  });

  it('resolves every $ref to a schema under #/components/schemas', () => {
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1] as string);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of new Set(refs)) {
      expect(ref).toMatch(/^#\/components\/schemas\/[A-Za-z]+$/);
      expect(doc.components.schemas[ref.split('/').pop() as string], ref).toBeDefined();
    }
    expect(Object.keys(doc.components.schemas).sort()).toEqual(['Problem', 'Session', 'Task']);
  });

  it('every body operation answers an unknown field with the 422 it documents', async () => {
    const session = await t.alice.post<{ data: { id: number } }>('/api/v1/sessions', { org_id: 1, name: 'Focus', type: 'standard', duration: 25, schedule: '2026-12-01', time: '9:00 AM' });
    const task = await t.alice.post<{ data: { id: string } }>('/api/v1/tasks', { context: 'Write', session_id: session.body.data.id });
    const ids: Record<string, string> = { '/api/v1/sessions/{id}': String(session.body.data.id), '/api/v1/tasks/{id}': task.body.data.id };
    for (const [method, path, op] of operations(doc).filter(([, , o]) => o.requestBody !== undefined)) {
      const res = await t.alice.request<{ errors: unknown[] }>(method.toUpperCase(), path.replace('{id}', ids[path] ?? '1'), { surely_not_a_field: 1 });
      expect(res.status, `${method} ${path}`).toBe(422);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(op.responses['422']).toBeDefined();
      expect(res.body.errors, `${method} ${path}`).toContainEqual({ path: '/surely_not_a_field', message: 'unknown field' });
    }
  });

  it('describes the responses the app really sends', async () => {
    const ajv = addFormats.default(new Ajv2020({ strict: false, allErrors: true }));
    ajv.addSchema({ $id: 'https://focus.test/openapi.json', components: doc.components });
    const check = (method: string, path: string, status: number, body: unknown) => {
      const schema = doc.paths[path]?.[method]?.responses[String(status)]?.content?.[status >= 400 ? 'application/problem+json' : 'application/json']?.schema;
      expect(schema, `${method} ${path} ${status} is documented`).toBeDefined();
      const validate = ajv.compile({ $id: `https://focus.test/${method}${path}/${status}`, ...rebase(schema) });
      expect(validate(body), `${method} ${path} ${status}: ${ajv.errorsText(validate.errors)}`).toBe(true);
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
    check('post', '/api/v1/sessions', created.status, created.body);
    const id = created.body.data.id;
    const one = await t.alice.get(`/api/v1/sessions/${id}`);
    check('get', '/api/v1/sessions/{id}', one.status, one.body);
    const list = await t.alice.get<{ data: unknown[] }>('/api/v1/sessions?day_start=2026-12-01&day_ends=2026-12-10');
    check('get', '/api/v1/sessions', list.status, list.body);
    expect(list.body.data.length).toBeGreaterThan(1);
    const joined = await t.alice.post(`/api/v1/sessions/${id}/join`);
    check('post', '/api/v1/sessions/{id}/join', joined.status, joined.body);
    const bulk = await t.alice.post<{ data: { id: string }[] }>('/api/v1/tasks/bulk', { session_id: id, tasks: [{ context: 'Inbox zero', source: 'linear', source_id: 7 }] });
    check('post', '/api/v1/tasks/bulk', bulk.status, bulk.body);
    const tasks = await t.alice.get('/api/v1/tasks');
    check('get', '/api/v1/tasks', tasks.status, tasks.body);
    const me = await t.alice.get('/api/v1/me');
    check('get', '/api/v1/me', me.status, me.body);
    const moved = await t.alice.put('/api/v1/me', { timezone: 'UTC' });
    check('put', '/api/v1/me', moved.status, moved.body);
    const invalid = await t.alice.post('/api/v1/tasks', { context: ' ', session_id: id });
    check('post', '/api/v1/tasks', invalid.status, invalid.body);
    const missing = await t.alice.get('/api/v1/tasks/999999');
    check('get', '/api/v1/tasks/{id}', missing.status, missing.body);
    const anonymous = await t.anonymous.get('/api/v1/tasks');
    check('get', '/api/v1/tasks', anonymous.status, anonymous.body);
    const deleted = await t.alice.delete(`/api/v1/tasks/${bulk.body.data[0]?.id ?? 'missing'}`);
    expect(deleted.status).toBe(204);
    expect(doc.paths['/api/v1/tasks/{id}']?.delete?.responses['204']).toBeDefined();
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
