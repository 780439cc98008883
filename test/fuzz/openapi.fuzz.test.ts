import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { addDays, daysBetween } from '../../src/features/recurrence/recurrence.dates.js';
import { type RecurrencePattern, occurrencesBetween } from '../../src/features/recurrence/recurrence.engine.js';
import { SESSION_DEFAULTS } from '../../src/features/sessions/sessions.schema.js';
import { HOST_OR_HTTP_URL_FORMAT, isHostOrHttpUrl } from '../../src/toolkit/web-address.js';
import { type Client, describeEachDialect, useTestApp } from '../helpers/harness.js';
import { ODD_STRINGS, SAMPLES, type Schema, acceptedTypes, valid } from './schema-arbitrary.js';
import { propertySeed } from '../helpers/seed.js';
import { report } from '../helpers/report.js';

/*
 * Every operation of GET /api/v1/openapi.json, fuzzed from its own schemas:
 * valid requests must get a documented 2xx whose body matches the documented
 * schema; invalid ones a documented 4xx problem+json. Any 5xx or undocumented
 * status fails. Replay with FC_SEED=<seed>; FC_RUNS sets runs per operation.
 */
const SEED = propertySeed();
const RUNS = Number(process.env.FC_RUNS ?? 20);

interface Parameter {
  name: string;
  in: 'query' | 'path';
  required?: boolean;
  schema: Schema;
}
interface Operation {
  method: string;
  path: string;
  key: string;
  parameters: Parameter[];
  /** The body's schema, its reference resolved (bodies are named components). */
  body?: Schema;
  /** Where the body's schema is, for validating with its own references resolved. */
  bodyRef?: string;
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
}
interface Request {
  id?: string;
  /** The `{file}` of a calendar feed's `.ics` path. */
  file?: string;
  query: Record<string, unknown>;
  body?: unknown;
  raw?: { text: string; type: string };
  /** The query parameter a mutation broke. */
  mutated?: string;
}

const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe'];
const SCHEDULE = '2026-12-01';
/** State-dependent refusals a schema-valid request may meet (e.g. completing before joining). */
const TOLERATED: Record<string, number[]> = {
  'POST /api/v1/sessions/{id}/join': [409],
  'POST /api/v1/sessions/{id}/leave': [409],
  'POST /api/v1/sessions/{id}/complete': [409],
  'POST /api/v1/tasks': [409],
  // A user holds at most 20 calendar feeds; the fuzzer creates more.
  'POST /api/v1/calendar-feeds': [409],
  // Likewise at most 20 webhooks.
  'POST /api/v1/webhooks': [409],
  // A test of a webhook the fuzzer turned off (PATCH active: false).
  'POST /api/v1/webhooks/{id}/test': [409],
};

/**
 * Operations a random valid body cannot succeed at: they need a password (sign-in, or the
 * current one to change it: accounts.password.test.ts), an invitation's or
 * a device's secret, or an admin (their own tests cover them; the invalid-input test still runs).
 */
const NEEDS_A_SECRET = /^\/auth\/|^\/api\/v1\/device(\/|$)|^\/api\/v1\/orgs\/\{id\}\/(invites|members)|^\/api\/v1\/me\/apps\/\{id\}|^\/api\/v1\/me\/password$/;

/**
 * Whether a session write leaves a series with no occurrence between its start and
 * `recurring_ends`: schema-valid, yet refused at `/recurring_ends` (contract section 6).
 * A PUT merges into its fixture, a one-off session on SCHEDULE.
 */
function emptySeries(key: string, body: Record<string, unknown> | undefined): boolean {
  if (body === undefined || (key !== 'POST /api/v1/sessions' && key !== 'PUT /api/v1/sessions/{id}')) return false;
  const s = { ...SESSION_DEFAULTS, schedule: SCHEDULE, ...body } as Record<string, unknown>;
  if (s.is_recurring !== 1 || s.occurrence === null || s.recurring_ends === null) return false;
  const start = (s.recurring_start ?? s.schedule) as string;
  const ends = s.recurring_ends as string;
  const pattern = {
    start, ends, occurrence: s.occurrence, recurringDays: s.recurring_days, monthOption: s.recurring_month_option,
    weekPos: s.recurring_month_week_pos, weekDay: s.recurring_month_week_day, fallback: s.fallback_option,
  } as RecurrencePattern;
  return occurrencesBetween(pattern, start, ends, 1).length === 0;
}

type Mutation =
  | { kind: 'wrong-type' | 'missing' | 'out-of-range' | 'odd-string' | 'huge-string'; pick: number; odd: string }
  | { kind: 'extra-field' | 'not-object' | 'malformed-json' | 'not-json' | 'unknown-query' | 'bad-query' | 'bad-id'; pick: number; odd: string };

const MUTATIONS = ['wrong-type', 'missing', 'out-of-range', 'odd-string', 'huge-string', 'extra-field', 'not-object', 'malformed-json', 'not-json', 'unknown-query', 'bad-query', 'bad-id'] as const;
const BAD_IDS = ['0', '-1', 'abc', '1.5', '1e3', '0x10', '9007199254740993', 'x'.repeat(300), '%F0%9F%98%80', '%00'];

describeEachDialect('OpenAPI-driven fuzzing', (dialect) => {
  // Webhook URLs point at 127.0.0.1 (nothing resolves off this machine); no dispatcher runs here.
  const t = useTestApp(dialect, { alice: [1, 2], bob: [1] }, { WEBHOOK_ALLOW_PRIVATE: '1' });
  let operations: Operation[];
  let ajv: Ajv;
  let problem: ValidateFunction;
  let aliceSession: number;
  let bobSession: number;
  /** Bob's calendar feed, `<secret>.ics`, made when the fuzzer first needs it. */
  let bobFeed: string | undefined;
  let aliceTask: string;
  const counts = new Map<string, { ok: number; tolerated: number; empty: number; rejected: number; skipped: number }>();
  const count = (key: string, field: 'ok' | 'tolerated' | 'empty' | 'rejected' | 'skipped') => {
    const c = counts.get(key) ?? { ok: 0, tolerated: 0, empty: 0, rejected: 0, skipped: 0 };
    c[field]++;
    counts.set(key, c);
  };

  const createSession = async (client: Client, extra: Record<string, unknown> = {}) => {
    const res = await client.post<{ data: { id: number } }>('/api/v1/sessions', { org_id: 1, name: 'Fixture', type: 'standard', duration: 30, schedule: SCHEDULE, time: '9:00 AM', is_public: true, ...extra });
    expect(res.status).toBe(201);
    return res.body.data.id;
  };
  const createTask = async () => {
    const res = await t.alice.post<{ data: { id: string } }>('/api/v1/tasks', { context: 'fixture', session_id: aliceSession });
    expect(res.status).toBe(201);
    return res.body.data.id;
  };

  beforeAll(async () => {
    aliceSession = await createSession(t.alice);
    bobSession = await createSession(t.bob, { schedule: '2026-03-10' }); // started: it can be completed
    aliceTask = await createTask();
    const doc = (await t.anonymous.get('/api/v1/openapi.json')).body as { paths: Record<string, Record<string, Omit<Operation, 'method' | 'path' | 'key' | 'body'> & { requestBody?: { content: Record<string, { schema: Schema }> } }>> };
    ajv = addFormats.default(new Ajv({ strict: false, allErrors: true }));
    ajv.addFormat(HOST_OR_HTTP_URL_FORMAT, isHostOrHttpUrl);
    ajv.addSchema(doc, 'openapi');
    problem = ajv.compile({ $ref: 'openapi#/components/schemas/Problem' });
    operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => {
        const body = op.requestBody?.content['application/json']?.schema;
        const bodyRef = body === undefined ? undefined : (body.$ref ?? `#/${pointer('paths', path, method, 'requestBody', 'content', 'application/json', 'schema')}`);
        return {
          method: method.toUpperCase(),
          path,
          key: `${method.toUpperCase()} ${path}`,
          parameters: op.parameters ?? [],
          body: body === undefined ? undefined : resolve(body.$ref ?? bodyRef ?? ''),
          bodyRef,
          responses: op.responses,
        };
      }),
    // A 200 from the event stream never ends: src/features/events/events.stream.test.ts reads it.
    ).filter((op) => op.key !== 'GET /api/v1/events');
  });

  afterAll(() => {
    const lines = [...counts].map(
      ([k, c]) => `  ${k.padEnd(42)} valid 2xx ${c.ok}, tolerated ${c.tolerated}${c.empty > 0 ? `, empty series 422 ${c.empty}` : ''}; invalid rejected ${c.rejected}, skipped ${c.skipped}`,
    );
    const total = [...counts.values()].reduce((s, c) => s + c.ok + c.tolerated + c.empty + c.rejected, 0);
    report(`[fuzz ${dialect}] seed=${SEED} runs/operation=${RUNS} requests=${total}\n${lines.join('\n')}\n`);
  });

  const resolve = (ref: string): Schema => ajv.getSchema(`openapi${ref}`)?.schema as Schema;

  function requestArb(op: Operation): fc.Arbitrary<Request> {
    const query = Object.fromEntries(op.parameters.filter((p) => p.in === 'query').map((p) => [p.name, valid(p.schema, resolve)]));
    const required = op.parameters.filter((p) => p.in === 'query' && p.required === true).map((p) => p.name);
    return fc.record({
      query: fc.record(query, { requiredKeys: required }),
      body: op.body === undefined ? fc.constant(undefined) : valid(op.body, resolve),
    });
  }

  /** Substitutes fixtures for references and repairs cross-field rules the schema cannot express. */
  async function prepare(op: Operation, request: Request): Promise<Request> {
    const q = request.query;
    const body = request.body as Record<string, unknown> | undefined;
    const hasId = op.path.includes('{id}');
    let id: string | undefined;
    if (hasId && op.path.startsWith('/api/v1/sessions')) {
      if (op.method === 'PUT' || op.method === 'DELETE') id = String(await createSession(t.alice));
      else id = String(/join|leave|complete/.test(op.path) ? bobSession : aliceSession);
      // Completing needs a participation first.
      if (op.path.endsWith('/complete')) expect((await t.alice.post(`/api/v1/sessions/${bobSession}/join`)).status).toBe(200);
    } else if (hasId && op.path.startsWith('/api/v1/calendar-feeds')) {
      const feeds = (await t.alice.get('/api/v1/calendar-feeds')).body.data as { id: number }[];
      id = String(feeds[0]?.id ?? (await t.alice.post('/api/v1/calendar-feeds', {})).body.data.id);
    } else if (hasId && op.path.startsWith('/api/v1/webhooks')) {
      const hooks = (await t.alice.get('/api/v1/webhooks')).body.data as { id: number }[];
      id = String(hooks[0]?.id ?? (await t.alice.post('/api/v1/webhooks', { url: 'http://127.0.0.1:9/fuzz', events: ['task.created'] })).body.data.id);
    } else if (hasId && op.path.startsWith('/api/v1/orgs')) {
      id = '1';
    } else if (hasId && op.path.startsWith('/api/v1/me/tokens')) {
      id = String((await t.alice.post('/api/v1/me/tokens', { name: 'fuzz', scopes: ['me:read'] })).body.data.id);
    } else if (hasId) id = op.method === 'DELETE' ? await createTask() : aliceTask;
    let file: string | undefined;
    if (op.path === '/ical/{file}') {
      bobFeed ??= ((await t.bob.post('/api/v1/calendar-feeds', {})).body.data.url as string).slice('/ical/'.length);
      file = bobFeed;
    }
    delete q.cursor;
    if (op.key === 'GET /api/v1/sessions') {
      if (q.org_id !== undefined) q.org_id = 1;
      if (q.date !== undefined && (q.day_start !== undefined || q.day_ends !== undefined)) delete q.date;
      if (q.day_ends !== undefined && q.day_start === undefined) delete q.day_ends;
      if (q.day_start !== undefined && q.day_ends !== undefined) {
        const span = daysBetween(q.day_start as string, q.day_ends as string);
        if (span < 0 || span > 365) delete q.day_ends;
      }
    } else if (op.key === 'GET /api/v1/me/stats' || op.key === 'GET /api/v1/orgs/{id}/stats') {
      // At most 366 days, `from` not after `to`.
      if (q.from !== undefined) q.to = addDays(q.from as string, Math.abs(daysBetween(q.from as string, (q.to ?? q.from) as string)) % 366);
      else if (q.to !== undefined) q.from = addDays(q.to as string, -27);
    } else if (op.key === 'GET /api/v1/sessions/{id}/occurrences') {
      q.to = addDays(q.from as string, Math.abs(Number(q.to?.toString().slice(-2) ?? 0)) % 60);
    } else if (op.path.startsWith('/api/v1/sessions/{id}')) {
      delete q.date;
      if (q.scope !== undefined) q.scope = 'series';
    }
    // A session's zone and the home zone of PUT /me alike.
    if (body !== undefined && typeof body.timezone === 'string') body.timezone = ZONES[body.timezone.length % ZONES.length];
    if (body !== undefined && op.path.startsWith('/api/v1/sessions')) {
      if (body.org_id !== undefined) body.org_id = 1;
      if (Array.isArray(body.collaborator)) body.collaborator = body.collaborator.length === 0 ? [] : ['bob'];
      if (body.is_recurring === 1 && body.occurrence == null) body.occurrence = 'daily';
      const start = (body.recurring_start ?? body.schedule ?? SCHEDULE) as string;
      if (typeof body.recurring_ends === 'string' && body.recurring_ends < start) body.recurring_ends = null;
      const writable = Object.keys(op.body?.properties ?? {}).filter((k) => (op.body?.properties?.[k] as Schema).type !== undefined || (op.body?.properties?.[k] as Schema).anyOf !== undefined || (op.body?.properties?.[k] as Schema).enum !== undefined);
      if (op.method === 'PUT' && !Object.keys(body).some((k) => writable.includes(k))) body.name = 'Renamed';
    }
    if (body !== undefined && op.path.startsWith('/api/v1/tasks')) {
      if (body.session_id !== undefined && op.method === 'POST') body.session_id = aliceSession;
      if ((body.source == null) !== (body.source_id == null)) {
        body.source = null;
        body.source_id = null;
      }
      if (op.method === 'PUT' && body.context === undefined && body.is_completed === undefined) body.is_completed = true;
    }
    // A token that expires in the past is refused; the fuzzer's instants are anywhere.
    if (body !== undefined && op.key === 'POST /api/v1/me/tokens' && body.expires_at !== undefined) body.expires_at = '2099-01-01T00:00:00Z';
    if (body !== undefined && op.path === '/api/v1/webhooks' && op.method === 'POST') body.url = 'http://127.0.0.1:9/fuzz';
    // A random string is rarely an absolute URL: the edit keeps one that is.
    if (body !== undefined && op.path === '/api/v1/webhooks/{id}' && body.url !== undefined) body.url = 'http://127.0.0.1:9/fuzz';
    return { ...request, ...(id === undefined ? {} : { id }), ...(file === undefined ? {} : { file }) };
  }

  async function send(op: Operation, request: Request, client: Client = t.alice) {
    // A problem page: any kind of the catalog (the slug's enum is checked by its own test).
    const path = op.path.replace('{id}', request.id ?? '1').replace('{file}', request.file ?? 'unknown.ics').replace('{slug}', 'validation-failed');
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(request.query)) if (v !== undefined) params.append(k, typeof v === 'string' ? v : JSON.stringify(v));
    const url = params.size === 0 ? path : `${path}?${params.toString()}`;
    if (request.raw !== undefined) return client.request(op.method, url, request.raw.text, { 'content-type': request.raw.type });
    if (request.body === undefined) return client.request(op.method, url, op.method === 'POST' ? {} : undefined);
    return client.request(op.method, url, JSON.stringify(request.body));
  }

  const pointer = (...tokens: string[]) => tokens.map((x) => encodeURIComponent(x.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');
  const validators = new Map<string, ValidateFunction | undefined>();
  /** The documented schema of a response, compiled by reference so that its `$ref`s resolve inside the document. */
  const validator = (op: Operation, status: number): ValidateFunction | undefined => {
    const key = `${op.key} ${status}`;
    if (!validators.has(key)) {
      const content = op.responses[String(status)]?.content;
      const media = content === undefined ? undefined : ['application/json', 'application/problem+json'].find((m) => m in content);
      validators.set(
        key,
        media === undefined ? undefined : ajv.compile({ $ref: `openapi#/${pointer('paths', op.path, op.method.toLowerCase(), 'responses', String(status), 'content', media, 'schema')}` }),
      );
    }
    return validators.get(key);
  };

  it('answers every schema-valid request with a documented 2xx matching its schema', async () => {
    expect(operations.length).toBeGreaterThanOrEqual(19);
    for (const op of operations.filter((o) => !NEEDS_A_SECRET.test(o.path))) {
      const client = op.path.startsWith('/api/v1/') && op.path !== '/api/v1/openapi.json' ? t.alice : t.anonymous;
      await fc.assert(
        fc.asyncProperty(requestArb(op), async (generated) => {
          const request = await prepare(op, structuredClone(generated));
          const res = await send(op, request, client);
          const documented = Object.keys(op.responses).map(Number);
          const context = `${op.key} ${JSON.stringify(request).slice(0, 400)} → ${res.status} ${res.text.slice(0, 400)}`;
          expect(documented, context).toContain(res.status);
          if (emptySeries(op.key, request.body as Record<string, unknown> | undefined)) {
            expect(res.status, context).toBe(422);
            expect((res.body as { errors: { path: string }[] }).errors.map((e) => e.path), context).toEqual(['/recurring_ends']);
            count(op.key, 'empty');
          } else if (res.status >= 200 && res.status < 300) {
            const check = validator(op, res.status);
            if (check !== undefined) expect(check(res.body), `${context}\n${JSON.stringify(check.errors)}`).toBe(true);
            else if (op.responses[String(res.status)]?.content?.['text/calendar'] !== undefined) expect(res.text, context).toMatch(/^BEGIN:VCALENDAR\r\n/);
            else if (op.responses[String(res.status)]?.content?.['text/html'] !== undefined) expect(res.text, context).toMatch(/^<!doctype html>\n/);
            else expect(res.text, context).toBe('');
            count(op.key, 'ok');
          } else {
            expect(TOLERATED[op.key] ?? [], context).toContain(res.status);
            expect(problem(res.body), context).toBe(true);
            count(op.key, 'tolerated');
          }
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
      expect(counts.get(op.key)?.ok ?? 0, `${op.key}: no valid request succeeded`).toBeGreaterThan(0);
    }
  }, 240_000);

  function mutate(op: Operation, request: Request, m: Mutation): Request | undefined {
    const body = request.body as Record<string, unknown> | undefined;
    const props = Object.entries(op.body?.properties ?? {}).filter(([, s]) => s.type !== undefined || s.anyOf !== undefined || s.enum !== undefined);
    const pick = <T>(list: readonly T[]): T | undefined => (list.length === 0 ? undefined : list[m.pick % list.length]);
    const bodyOnly = (b: unknown): Request | undefined => (op.body === undefined ? undefined : { ...request, body: b });
    switch (m.kind) {
      case 'wrong-type': {
        const [name, schema] = pick(props) ?? [];
        if (name === undefined || schema === undefined) return undefined;
        const accepted = acceptedTypes(schema, resolve);
        const wrong = Object.keys(SAMPLES).filter((type) => accepted !== undefined && !accepted.has(type));
        const type = pick(wrong);
        return type === undefined ? undefined : bodyOnly({ ...body, [name]: SAMPLES[type] });
      }
      case 'missing': {
        const name = pick(op.body?.required ?? []);
        if (name === undefined || body === undefined) return undefined;
        const { [name]: _gone, ...rest } = body;
        return bodyOnly(rest);
      }
      case 'out-of-range': {
        const numeric = props.filter(([, s]) => [s.type].flat().includes('integer') && (s.minimum !== undefined || s.maximum !== undefined));
        const [name, schema] = pick(numeric) ?? [];
        if (name === undefined || schema === undefined) return undefined;
        return bodyOnly({ ...body, [name]: m.pick % 2 === 0 && schema.maximum !== undefined ? schema.maximum + 1 : (schema.minimum ?? 0) - 1 });
      }
      case 'odd-string': {
        const stringy = props.filter(([, s]) => s.enum !== undefined || s.format !== undefined || s.pattern !== undefined);
        const [name] = pick(stringy) ?? [];
        return name === undefined ? undefined : bodyOnly({ ...body, [name]: m.odd });
      }
      case 'huge-string': {
        const strings = props.filter(([, s]) => [s.type].flat().includes('string'));
        const [name, schema] = pick(strings) ?? [];
        if (name === undefined || schema === undefined) return undefined;
        return bodyOnly({ ...body, [name]: '\u00e9'.repeat(Math.min((schema.maxLength ?? 200_000) + 1, 400_000)) });
      }
      case 'extra-field':
        return bodyOnly({ ...body, [`fuzz_${m.odd.length}_${m.pick}`]: m.odd });
      case 'not-object':
        return bodyOnly(pick([[], 42, 'text', null, true, [body]]));
      case 'malformed-json':
        return op.body === undefined ? undefined : { ...request, raw: { text: pick(['{"context":', '{,}', "{'a':1}", '\u0000', '{"a":1}}', '[']) ?? '{', type: 'application/json' } };
      case 'not-json':
        return op.body === undefined ? undefined : { ...request, raw: { text: JSON.stringify(body), type: pick(['text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) ?? 'text/plain' } };
      case 'unknown-query':
        return op.parameters.some((p) => p.in === 'query') ? { ...request, query: { ...request.query, [`fuzz${m.pick}`]: m.odd || 'x' } } : undefined;
      case 'bad-query': {
        const param = pick(op.parameters.filter((p) => p.in === 'query'));
        if (param === undefined) return undefined;
        const schema = param.schema;
        const value = [schema.type].flat().includes('integer') ? pick(['abc', '1.5', '0x10', '1e3', ' 7', String((schema.maximum ?? 1e6) + 1), String((schema.minimum ?? 0) - 1)]) : [schema.type].flat().includes('boolean') ? 'maybe' : m.odd;
        return { ...request, query: { ...request.query, [param.name]: value }, mutated: param.name };
      }
      case 'bad-id':
        return op.path.includes('{id}') ? { ...request, id: pick(BAD_IDS) } : undefined;
      default:
        return undefined;
    }
  }

  /** A mutated body or query that still passes the documented schema is not invalid: skip it. */
  function stillValid(op: Operation, request: Request, m: Mutation): boolean {
    if (['wrong-type', 'missing', 'out-of-range', 'odd-string', 'huge-string', 'extra-field', 'not-object'].includes(m.kind)) {
      return op.bodyRef !== undefined && ajv.validate({ $ref: `openapi${op.bodyRef}` }, request.body);
    }
    if (m.kind === 'bad-query') {
      const text = new Ajv({ strict: false, coerceTypes: true });
      addFormats.default(text);
      const params = op.parameters.filter((p) => p.in === 'query');
      const ok = text.validate(
        { type: 'object', properties: Object.fromEntries(params.map((p) => [p.name, p.schema])) },
        Object.fromEntries(Object.entries(request.query).filter(([, v]) => v !== undefined).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])),
      );
      // Ajv reads "1e3", "0x10" or " 7" as integers; the API does not, so those stay invalid.
      const param = op.parameters.find((p) => p.name === request.mutated);
      const raw = request.query[request.mutated ?? ''];
      const value = typeof raw === 'string' ? raw : JSON.stringify(raw ?? '');
      return ok && !([param?.schema.type].flat().includes('integer') && /^(?:0x|\s)|[eE.]/.test(value));
    }
    return false;
  }

  it('answers every invalid request with a documented 4xx problem+json', async () => {
    const applicable = (op: Operation) =>
      MUTATIONS.filter((k) =>
        k === 'bad-id' ? op.path.includes('{id}') : k.endsWith('query') ? op.parameters.some((p) => p.in === 'query') : op.body !== undefined,
      );
    for (const op of operations) {
      const kinds = applicable(op);
      // Nothing to break in a request without parameters or body (health, readiness, /me).
      if (kinds.length === 0) continue;
      const mutation = fc.record({ kind: fc.constantFrom(...kinds), pick: fc.nat(1000), odd: fc.constantFrom(...ODD_STRINGS) }) as fc.Arbitrary<Mutation>;
      const client = op.path.startsWith('/api/v1/') && op.path !== '/api/v1/openapi.json' ? t.alice : t.anonymous;
      await fc.assert(
        fc.asyncProperty(requestArb(op), mutation, async (generated, m) => {
          const prepared = await prepare(op, structuredClone(generated));
          const request = mutate(op, prepared, m);
          if (request === undefined || stillValid(op, request, m)) {
            count(op.key, 'skipped');
            return;
          }
          const res = await send(op, request, client);
          const context = `${op.key} ${m.kind} ${JSON.stringify(request).slice(0, 300)} → ${res.status} ${res.text.slice(0, 300)}`;
          expect(res.status, context).toBeGreaterThanOrEqual(400);
          expect(res.status, context).toBeLessThan(500);
          expect(Object.keys(op.responses), context).toContain(String(res.status));
          expect(String(res.headers['content-type']), context).toMatch(/^application\/problem\+json/);
          expect(problem(res.body), `${context}\n${JSON.stringify(problem.errors)}`).toBe(true);
          count(op.key, 'rejected');
        }),
        { seed: SEED, numRuns: RUNS * 2, endOnFailure: true },
      );
    }
  }, 240_000);
});
