import { existsSync, readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../src/app/app.js';
import { openStorage } from '../../src/storage/database.js';
import { describeEachDialect, testConfig, useTestDatabase } from '../helpers/harness.js';
import { type CliResult, buildOnce, focus, focusBin } from '../helpers/server-process.js';

/*
 * The admin CLI as an operator runs it: `npx focus …` in the repository root, the
 * database named by DATABASE_URL, the JSON result alone on stdout.
 */

beforeAll(buildOnce, 180_000);

/** A failed command: non-zero exit, nothing on stdout, exactly one line on stderr. */
function expectOneLineFailure(result: CliResult, mentions: RegExp): void {
  expect(result.code, result.stderr).not.toBe(0);
  expect(result.stdout).toBe('');
  const lines = result.stderr.split('\n').filter((l) => l !== '');
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^focus: /);
  expect(lines[0]).toMatch(mentions);
}

/** A successful command: exit 0, exactly one JSON document on stdout. */
function json(result: CliResult): unknown {
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout.endsWith('\n')).toBe(true);
  expect(result.stdout.trim().split('\n')).toHaveLength(1);
  return JSON.parse(result.stdout);
}

describeEachDialect('npx focus', (dialect) => {
  const database = useTestDatabase(dialect);
  let env: Record<string, string>;
  let app: FastifyInstance;

  beforeAll(() => {
    env = { DATABASE_URL: database.url };
  });

  afterAll(async () => {
    await app?.close();
  });

  const me = (token: string) => app.inject({ url: '/api/v1/me', headers: { authorization: `Bearer ${token}` } });

  it('migrate applies every migration on an empty database, then none', async () => {
    const first = json(await focus(env, 'migrate')) as { applied: string[] };
    expect(first.applied.length).toBeGreaterThan(0);
    expect(first.applied[0]).toBe('0001_initial');
    expect(json(await focusBin(env, 'migrate'))).toEqual({ applied: [] });
    // The app serves the same database without migrating it again.
    app = await buildApp({ config: testConfig(database.url), logger: false, migrate: false });
    await app.ready();
  }, 90_000);

  it('users add prints exactly the user, creates orgs, and is idempotent', async () => {
    const added = await focus(env, 'users', 'add', 'alice', '--org', '1', '--org', '2');
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toBe('{"handle":"alice","org_ids":[1,2]}\n');
    expect(added.stderr).toBe('');

    const [again, more] = await Promise.all([
      focusBin(env, 'users', 'add', 'alice', '--org', '2'),
      focusBin(env, 'users', 'add', 'bob', '--org', '2'),
    ]);
    expect(json(again)).toEqual({ handle: 'alice', org_ids: [1, 2] });
    expect(json(more)).toEqual({ handle: 'bob', org_ids: [2] });
    expect(json(await focusBin(env, 'users', 'add', 'alice', '--org', '3'))).toEqual({ handle: 'alice', org_ids: [1, 2, 3] });
  }, 90_000);

  it('rejects bad input with one line on stderr and nothing on stdout', async () => {
    const [badHandle, noOrg, textOrg, zeroOrg, unknown, none, unknownOption, badUrl] = await Promise.all([
      focusBin(env, 'users', 'add', 'Alice', '--org', '1'),
      focusBin(env, 'users', 'add', 'carol'),
      focusBin(env, 'users', 'add', 'carol', '--org', 'x'),
      focusBin(env, 'users', 'add', 'carol', '--org', '0'),
      focus(env, 'frobnicate'),
      focusBin(env),
      focusBin(env, 'users', 'add', 'carol', '--org', '1', '--colour'),
      focusBin({ DATABASE_URL: 'mysql://x' }, 'migrate'),
    ]);
    expectOneLineFailure(badHandle, /handle/);
    expectOneLineFailure(noOrg, /--org/);
    expectOneLineFailure(textOrg, /org id .*: x$/);
    expectOneLineFailure(zeroOrg, /org id .*: 0$/);
    expectOneLineFailure(unknown, /unknown command "frobnicate"/);
    expectOneLineFailure(none, /missing command/);
    expectOneLineFailure(unknownOption, /--colour/);
    expectOneLineFailure(badUrl, /DATABASE_URL/);
    // None of them created anyone.
    const storage = openStorage({ databaseUrl: database.url });
    try {
      const handles = await storage.db.selectFrom('users').select('handle').orderBy('handle').execute();
      expect(handles.map((u) => u.handle)).toEqual(['alice', 'bob']);
    } finally {
      await storage.close();
    }
  }, 90_000);

  it('tokens issue prints a working token once and stores only its hash', async () => {
    const before = Date.now();
    const issued = json(await focus(env, 'tokens', 'issue', 'alice', '--name', 'laptop', '--ttl', '30d')) as Record<string, unknown>;
    expect(Object.keys(issued).sort()).toEqual(['expires_at', 'id', 'token']);
    expect(issued.id).toEqual(expect.any(Number));
    expect(issued.token).toMatch(/^fst_[0-9A-Za-z]{32,}$/);
    const expires = Date.parse(issued.expires_at as string);
    expect(issued.expires_at).toBe(new Date(expires).toISOString());
    expect(expires - before).toBeGreaterThanOrEqual(30 * 86_400_000 - 1000);
    expect(expires - Date.now()).toBeLessThanOrEqual(30 * 86_400_000);

    const res = await me(issued.token as string);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: { handle: 'alice', org_ids: [1, 2, 3] } });

    const storage = openStorage({ databaseUrl: database.url });
    try {
      const row = await storage.db.selectFrom('tokens').selectAll().where('id', '=', issued.id as number).executeTakeFirstOrThrow();
      expect(row.name).toBe('laptop');
      expect(row.token_hash).not.toContain(issued.token);
      expect(JSON.stringify(row)).not.toContain((issued.token as string).slice(4));
    } finally {
      await storage.close();
    }
    if (dialect === 'sqlite') {
      const file = database.url.slice('sqlite:'.length);
      for (const path of [file, `${file}-wal`]) {
        if (!existsSync(path)) continue;
        expect(readFileSync(path, 'latin1').includes((issued.token as string).slice(4))).toBe(false);
      }
    }
  }, 90_000);

  it('tokens issue without --ttl never expires; unknown users and bad ttl fail', async () => {
    const [forever, nobody, badTtl] = await Promise.all([
      focusBin(env, 'tokens', 'issue', 'bob'),
      focusBin(env, 'tokens', 'issue', 'nobody'),
      focusBin(env, 'tokens', 'issue', 'bob', '--ttl', 'soon'),
    ]);
    const issued = json(forever) as { id: number; token: string; expires_at: null };
    expect(issued.expires_at).toBeNull();
    expect((await me(issued.token)).json()).toEqual({ data: { handle: 'bob', org_ids: [2] } });
    expectOneLineFailure(nobody, /nobody/);
    expectOneLineFailure(badTtl, /ttl/);
  }, 90_000);

  it('tokens revoke turns the token away; unknown ids fail', async () => {
    const issued = json(await focusBin(env, 'tokens', 'issue', 'alice', '--name', 'phone')) as { id: number; token: string };
    const other = json(await focusBin(env, 'tokens', 'issue', 'alice')) as { id: number; token: string };
    expect((await me(issued.token)).statusCode).toBe(200);

    const revoked = await focus(env, 'tokens', 'revoke', String(issued.id));
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toBe(`{"id":${issued.id},"revoked":true}\n`);

    const res = await me(issued.token);
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    // Only that token.
    expect((await me(other.token)).statusCode).toBe(200);

    const [unknown, notANumber] = await Promise.all([
      focusBin(env, 'tokens', 'revoke', '999999'),
      focusBin(env, 'tokens', 'revoke', 'laptop'),
    ]);
    expectOneLineFailure(unknown, /999999/);
    expectOneLineFailure(notANumber, /token id/);
  }, 90_000);
});
