import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { buildApp } from '../../src/app/app.js';
import { type Config, loadConfig } from '../../src/config/config.js';
import { type AuthService, createAuthService } from '../../src/features/auth/auth.service.js';
import { type Storage, openStorage } from '../../src/storage/database.js';
import type { DialectName } from '../../src/storage/dialect.js';

/** The dialects this run covers: SQLite always, PostgreSQL when TEST_DATABASE_URL is set. */
export const DIALECTS: DialectName[] = ['sqlite', ...(process.env.TEST_DATABASE_URL ? (['postgres'] as const) : [])];

/** Runs a suite once per dialect of this run, named after it. */
export function describeEachDialect(name: string, fn: (dialect: DialectName) => void): void {
  for (const dialect of DIALECTS) describe(`${name} [${dialect}]`, () => fn(dialect));
}

export interface TestDatabase {
  url: string;
  dialect: DialectName;
  drop(): Promise<void>;
}

/** A fresh, empty database: a new SQLite file, or a new schema on the test PostgreSQL server. */
export async function createTestDatabase(dialect: DialectName): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'focus-test-'));
    return { url: `sqlite:${join(dir, 'focus.db')}`, dialect, drop: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })) };
  }
  const base = process.env.TEST_DATABASE_URL;
  if (base === undefined) throw new Error('TEST_DATABASE_URL is not set');
  const schema = `t_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema},public`);
  return {
    url: url.toString(),
    dialect,
    drop: async () => {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`drop schema if exists ${schema} cascade`);
      await client.end();
    },
  };
}

/** Per test process, the SQLite file every migrated test database starts as a copy of. */
let sqliteTemplate: Promise<string> | undefined;

function migratedSqliteTemplate(): Promise<string> {
  sqliteTemplate ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'focus-template-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'focus.db');
    const storage = openStorage({ databaseUrl: `sqlite:${file}` });
    await storage.migrate();
    // Closed: its write-ahead log is folded into the file, which is then whole.
    await storage.close();
    return file;
  })();
  return sqliteTemplate;
}

/**
 * A fresh database for a caller that migrates it. On SQLite a copy of a file migrated once per
 * test process, where migrate() then finds nothing to do: migrating each of a run's hundreds of
 * databases cost ~0.2 s of CPU apiece. On PostgreSQL an empty schema, as createTestDatabase gives.
 */
export async function freshDatabaseToMigrate(dialect: DialectName): Promise<TestDatabase> {
  const database = await createTestDatabase(dialect);
  if (dialect === 'sqlite') copyFileSync(await migratedSqliteTemplate(), database.url.slice('sqlite:'.length));
  return database;
}

export function testConfig(url: string, env: Record<string, string> = {}): Config {
  return loadConfig({ DATABASE_URL: url, LOG_LEVEL: 'silent', RATE_LIMIT: '0', ...env });
}

export interface Response<T = unknown> {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: T;
  text: string;
}

/** A client bound to one token (or none), speaking to the app through inject(). */
export class Client {
  constructor(
    private readonly app: FastifyInstance,
    readonly token?: string,
  ) {}

  async request<T = any>(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response<T>> {
    const res = await this.app.inject({
      method: method as 'GET',
      url,
      headers: {
        ...(this.token === undefined ? {} : { authorization: `Bearer ${this.token}` }),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { payload: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    let parsed: unknown;
    try {
      parsed = res.body === '' ? undefined : JSON.parse(res.body);
    } catch {
      parsed = undefined;
    }
    return { status: res.statusCode, headers: res.headers, body: parsed as T, text: res.body };
  }
  get<T = any>(url: string) {
    return this.request<T>('GET', url);
  }
  post<T = any>(url: string, body?: unknown) {
    return this.request<T>('POST', url, body ?? {});
  }
  put<T = any>(url: string, body: unknown) {
    return this.request<T>('PUT', url, body);
  }
  patch<T = any>(url: string, body: unknown) {
    return this.request<T>('PATCH', url, body);
  }
  delete<T = any>(url: string) {
    return this.request<T>('DELETE', url);
  }
}

/** A client holding a fresh token of one user. */
export type UserClient = Client & { tokenId: number };

export interface TestApp {
  app: FastifyInstance;
  storage: Storage;
  /** Users and tokens, as the CLI manages them. */
  admin: AuthService;
  url: string;
  dialect: DialectName;
  /** Creates (or extends) a user in the given orgs and returns a client holding a fresh token. */
  user(handle: string, orgIds: number[], tokenOptions?: { ttl?: string }): Promise<UserClient>;
  anonymous: Client;
  close(): Promise<void>;
}

export async function createTestApp(dialect: DialectName, env: Record<string, string> = {}): Promise<TestApp> {
  const database = await freshDatabaseToMigrate(dialect);
  const storage = openStorage({ databaseUrl: database.url });
  const admin = createAuthService(storage);
  const app = await buildApp({ config: testConfig(database.url, env), storage, logger: false });
  await app.ready();
  return {
    app,
    storage,
    admin,
    url: database.url,
    dialect,
    async user(handle, orgIds, tokenOptions = {}) {
      await admin.addUser(handle, orgIds);
      const issued = await admin.issueToken(handle, tokenOptions);
      return Object.assign(new Client(app, issued.token), { tokenId: issued.id });
    },
    anonymous: new Client(app),
    async close() {
      await app.close();
      await storage.close();
      await database.drop();
    },
  };
}

export interface StorageFixture {
  database: TestDatabase;
  storage: Storage;
  /** 'ann', a member of org 1. */
  user: { id: number; handle: string; orgIds: number[]; timezone: string };
  close(): Promise<void>;
}

/** For tests below the HTTP layer: a migrated fresh database holding one user in org 1. */
export async function createStorageFixture(dialect: DialectName, now = '2026-01-01T00:00:00.000Z'): Promise<StorageFixture> {
  const database = await freshDatabaseToMigrate(dialect);
  const storage = openStorage({ databaseUrl: database.url });
  await storage.migrate();
  const row = await storage.db.insertInto('users').values({ handle: 'ann', created_at: now }).returning('id').executeTakeFirstOrThrow();
  await storage.db.insertInto('orgs').values({ id: 1, created_at: now }).execute();
  await storage.db.insertInto('memberships').values({ user_id: row.id, org_id: 1 }).execute();
  return {
    database,
    storage,
    user: { id: row.id, handle: 'ann', orgIds: [1], timezone: 'UTC' },
    async close() {
      await storage.close();
      await database.drop();
    },
  };
}

/**
 * Something the enclosing suite opens in beforeAll and closes in afterAll. The suite reads
 * it through the returned stand-in, in its tests and in hooks it registers later (which run
 * after this beforeAll and before this afterAll); reading it earlier is an error.
 */
function openedForSuite<T extends object>(what: string, open: () => Promise<T>, close: (value: T) => Promise<void>): T {
  let value: T | undefined;
  beforeAll(async () => {
    value = await open();
  });
  afterAll(async () => {
    if (value !== undefined) await close(value);
  });
  const ready = (key: string | symbol): T => {
    if (value === undefined) throw new Error(`${what}: ${String(key)} is read before the suite's beforeAll ran`);
    return value;
  };
  return new Proxy({} as T, {
    get: (_target, key) => Reflect.get(ready(key), key) as unknown,
    has: (_target, key) => key in ready(key),
    ownKeys: () => Reflect.ownKeys(ready('its keys')),
    getOwnPropertyDescriptor: (_target, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(ready(key), key);
      return descriptor === undefined ? undefined : { ...descriptor, configurable: true };
    },
  });
}

/** A test app with a client for each of the suite's users, by handle. */
export type TestAppWith<Handle extends string> = TestApp & { readonly [H in Handle]: UserClient };

/**
 * The usual suite set-up: a fresh app on `dialect` for the enclosing suite, and its users
 * created in the order given, each in its orgs and holding a token.
 *
 *   const t = useTestApp(dialect, { alice: [1], bob: [1], carol: [2] });
 *   it('…', async () => { await t.alice.get('/api/v1/me'); });
 */
export function useTestApp<const Handle extends string = never>(
  dialect: DialectName,
  users: Record<Handle, number[]> = {} as Record<Handle, number[]>,
  env: Record<string, string> = {},
): TestAppWith<Handle> {
  return openedForSuite(
    'useTestApp',
    async () => {
      const t = await createTestApp(dialect, env);
      const clients: Record<string, UserClient> = {};
      for (const [handle, orgIds] of Object.entries<number[]>(users)) {
        if (handle in t) throw new Error(`useTestApp: a user cannot be called ${handle}, the name of a TestApp field`);
        clients[handle] = await t.user(handle, orgIds);
      }
      return { ...t, ...clients } as TestAppWith<Handle>;
    },
    (t) => t.close(),
  );
}

/** createTestDatabase for the enclosing suite: made in beforeAll, dropped in afterAll. */
export function useTestDatabase(dialect: DialectName): TestDatabase {
  return openedForSuite('useTestDatabase', () => createTestDatabase(dialect), (database) => database.drop());
}

/**
 * A storage on a database of its own, not migrated, for the enclosing suite: what a test of
 * one migration on existing rows starts from (it migrates to the one before, writes, migrates on).
 */
export function useUnmigratedStorage(dialect: DialectName): { readonly storage: Storage } {
  const database = useTestDatabase(dialect);
  return openedForSuite('useUnmigratedStorage', () => Promise.resolve({ storage: openStorage({ databaseUrl: database.url }) }), (o) => o.storage.close());
}

/** createStorageFixture for the enclosing suite: opened in beforeAll, closed in afterAll. */
export function useStorageFixture(dialect: DialectName, now?: string): StorageFixture {
  return openedForSuite('useStorageFixture', () => createStorageFixture(dialect, now), (fixture) => fixture.close());
}

/** The paths of a 422 problem's field errors, sorted; fails unless the answer is a 422 problem. */
export function errorPaths(res: Response): string[] {
  expect(res.status, res.text).toBe(422);
  expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
  return ((res.body as { errors?: { path: string }[] }).errors ?? []).map((e) => e.path).sort();
}

/** Anything that answers a GET: a Client, or a wrapper around a real server's socket. */
export interface PageSource {
  get(url: string): Promise<{ status: number; body: unknown; text?: string }>;
}

/**
 * Every item of a listing at `path?query`, following next_cursor with pages of `limit`;
 * fails unless every page answers 200, none holds more than `limit` and every page but
 * the last is full.
 */
export async function listAll<T>(source: PageSource, path: string, query: string, limit: number): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 10_000; page++) {
    const url = `${path}?${query}${query === '' ? '' : '&'}limit=${limit}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
    const res = await source.get(url);
    expect(res.status, res.text ?? url).toBe(200);
    const body = res.body as { data: T[]; next_cursor: string | null };
    expect(body.data.length).toBeLessThanOrEqual(limit);
    out.push(...body.data);
    cursor = body.next_cursor;
    if (cursor === null) return out;
    expect(body.data.length).toBe(limit);
  }
  throw new Error('paging did not end');
}
