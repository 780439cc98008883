import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app/app.js';
import { describeDatabase } from '../../src/config/config.js';
import { VARIABLES } from '../../src/config/config.variables.js';
import { openStorage } from '../../src/storage/database.js';
import { describeEachDialect, testConfig, useTestDatabase } from '../helpers/harness.js';
import { type CliResult, ROOT, buildOnce, focus, focusBin, focusBinWithInput, focusIn } from '../helpers/server-process.js';

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

  it('migrate applies every migration on an empty database, then none, and says where the database is', async () => {
    const first = json(await focusBin(env, 'migrate')) as { database: string; applied: string[] };
    expect(first.database).toBe(describeDatabase(database.url));
    expect(first.database).not.toContain('@127.0.0.1:5432/test?');
    expect(first.applied.length).toBeGreaterThan(0);
    expect(first.applied[0]).toBe('0001_initial');
    expect(json(await focusBin(env, 'migrate'))).toEqual({ database: first.database, applied: [] });
    // The app serves the same database without migrating it again.
    app = await buildApp({ config: testConfig(database.url), logger: false, migrate: false });
    await app.ready();
  }, 90_000);

  it('users add prints exactly the user, creates orgs, and is idempotent', async () => {
    const added = await focusBin(env, 'users', 'add', 'alice', '--org', '1', '--org', '2');
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
    const [noHandle, noHandleNorOrg, badHandle, noOrg, textOrg, zeroOrg, unknown, none, unknownOption, badUrl] = await Promise.all([
      focusBin(env, 'users', 'add', '--org', '1'),
      focusBin(env, 'users', 'add'),
      focusBin(env, 'users', 'add', 'Alice', '--org', '1'),
      focusBin(env, 'users', 'add', 'carol'),
      focusBin(env, 'users', 'add', 'carol', '--org', 'x'),
      focusBin(env, 'users', 'add', 'carol', '--org', '0'),
      focus(env, 'frobnicate'),
      focusBin(env),
      focusBin(env, 'users', 'add', 'carol', '--org', '1', '--colour'),
      focusBin({ DATABASE_URL: 'mysql://x' }, 'migrate'),
    ]);
    // The handle first: commander checks options before arguments, the message does not.
    expectOneLineFailure(noHandle, /^focus: "users add" needs <handle> \(focus users add --help\)$/);
    expectOneLineFailure(noHandleNorOrg, /^focus: "users add" needs <handle> \(focus users add --help\)$/);
    expectOneLineFailure(badHandle, /handle .*: Alice \(focus users add --help\)$/);
    expectOneLineFailure(noOrg, /^focus: "users add" needs --org <id> \(focus users add --help\)$/);
    expectOneLineFailure(textOrg, /org id .*: x \(focus users add --help\)$/);
    expectOneLineFailure(zeroOrg, /org id .*: 0 \(focus users add --help\)$/);
    expectOneLineFailure(unknown, /^focus: unknown command "frobnicate" \(focus --help\)$/);
    expectOneLineFailure(none, /^focus: missing command: one of migrate, users, invite, tokens, webhooks, feeds, serve \(focus --help\)$/);
    expectOneLineFailure(unknownOption, /^focus: unknown option --colour for "users add" \(focus users add --help\)$/);
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
    const issued = json(await focusBin(env, 'tokens', 'issue', 'alice', '--name', 'laptop', '--ttl', '30d')) as Record<string, unknown>;
    expect(Object.keys(issued).sort()).toEqual(['expires_at', 'id', 'token']);
    expect(issued.id).toEqual(expect.any(Number));
    expect(issued.token).toMatch(/^fst_[0-9A-Za-z]{32,}$/);
    const expires = Date.parse(issued.expires_at as string);
    expect(issued.expires_at).toBe(new Date(expires).toISOString());
    expect(expires - before).toBeGreaterThanOrEqual(30 * 86_400_000 - 1000);
    expect(expires - Date.now()).toBeLessThanOrEqual(30 * 86_400_000);

    const res = await me(issued.token as string);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: { handle: 'alice', org_ids: [1, 2, 3], timezone: 'UTC', reminders: [5] } });

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

  it('tokens issue without --ttl never expires; a long --ttl is fine up to the year 9999', async () => {
    const [forever, decades] = await Promise.all([
      focusBin(env, 'tokens', 'issue', 'bob'),
      focusBin(env, 'tokens', 'issue', 'bob', '--name', 'archive', '--ttl', '2000000d'),
    ]);
    const issued = json(forever) as { id: number; token: string; expires_at: null };
    expect(issued.expires_at).toBeNull();
    expect((await me(issued.token)).json()).toEqual({ data: { handle: 'bob', org_ids: [2], timezone: 'UTC', reminders: [5] } });
    // Seven digits: no hidden cap on the number, only on the date it reaches.
    const long = json(decades) as { expires_at: string };
    expect(long.expires_at).toMatch(/^\d{4}-/);
    expect(Date.parse(long.expires_at) - Date.now()).toBeGreaterThan(1_999_999 * 86_400_000);
  }, 90_000);

  it('users email sets the address single sign-on matches (lower-cased), one user per address; --clear removes it', async () => {
    expect(json(await focusBin(env, 'users', 'email', 'alice', 'Alice@Example.com'))).toEqual({ handle: 'alice', email: 'alice@example.com' });
    expectOneLineFailure(await focusBin(env, 'users', 'email', 'bob', 'alice@example.COM'), /alice already has the email alice@example\.com/);
    expectOneLineFailure(await focusBin(env, 'users', 'email', 'bob', 'not-an-address'), /not an email address: not-an-address/);
    expectOneLineFailure(await focusBin(env, 'users', 'email', 'bob'), /give an address or --clear/);
    expect(json(await focusBin(env, 'users', 'email', 'alice', '--clear'))).toEqual({ handle: 'alice', email: null });
    expect(json(await focusBin(env, 'users', 'email', 'bob', 'alice@example.com'))).toEqual({ handle: 'bob', email: 'alice@example.com' });
  }, 90_000);

  it('users password sets a forgotten password from stdin and ends that user’s browser sessions', async () => {
    const login = (password: string) =>
      app.inject({ method: 'POST', url: '/auth/login', remoteAddress: '10.7.0.1', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ handle: 'bob', password }) });
    expect(json(await focusBinWithInput(env, 'bobs first password\n', 'users', 'password', 'bob'))).toEqual({ handle: 'bob' });
    const signedIn = await login('bobs first password');
    expect(signedIn.statusCode).toBe(204);
    const cookie = /^focus_session=([^;]*)/.exec(String(signedIn.headers['set-cookie']))?.[1] ?? '';
    const withCookie = () => app.inject({ url: '/api/v1/me', headers: { cookie: `focus_session=${cookie}` } });
    expect((await withCookie()).statusCode).toBe(200);
    expect(json(await focusBinWithInput(env, 'bobs second password\r\nignored\n', 'users', 'password', 'bob'))).toEqual({ handle: 'bob' });
    expect((await withCookie()).statusCode).toBe(401);
    expect((await login('bobs first password')).statusCode).toBe(401);
    expect((await login('bobs second password')).statusCode).toBe(204);
    expectOneLineFailure(await focusBinWithInput(env, 'too short\n', 'users', 'password', 'bob'), /the password must be 10–256 characters/);
    expectOneLineFailure(await focusBinWithInput(env, '', 'users', 'password', 'bob'), /the password must be 10–256 characters/);
    expectOneLineFailure(await focusBinWithInput(env, 'long enough password\n', 'users', 'password', 'nobody'), /no user with handle nobody/);
    expect((await login('bobs second password')).statusCode).toBe(204);
  }, 90_000);

  it('every bad argument gets its own clear message, and nothing is written', async () => {
    const before = json(await focusBin(env, 'tokens', 'list')) as { data: unknown[] };
    const usersBefore = json(await focusBin(env, 'users', 'list'));
    const cases: [string[], RegExp][] = [
      [['tokens', 'issue', 'nobody'], /^focus: no user with handle nobody \(focus tokens issue --help\)$/],
      [['tokens', 'issue', 'bob', '--ttl', 'soon'], /^focus: --ttl must be a whole number and a unit s, m, h, d or w .*: soon \(focus tokens issue --help\)$/],
      [['tokens', 'issue', 'bob', '--ttl', '5'], /^focus: --ttl must be a whole number and a unit .*: 5 \(focus tokens issue --help\)$/],
      [['tokens', 'issue', 'bob', '--ttl', '1.5d'], /^focus: --ttl must be a whole number and a unit .*: 1\.5d \(focus tokens issue --help\)$/],
      [['tokens', 'issue', 'bob', '--ttl', '-5d'], /^focus: --ttl must be more than zero: -5d \(focus tokens issue --help\)$/],
      [['tokens', 'issue', 'bob', '--ttl', '0h'], /^focus: --ttl must be more than zero: 0h \(focus tokens issue --help\)$/],
      [['tokens', 'issue', 'bob', '--ttl', '99999999d'], /^focus: --ttl 99999999d ends after the year 9999; leave --ttl out for a token that never expires \(focus tokens issue --help\)$/],
      [['tokens', 'issue', 'bob', '--ttl', `${'9'.repeat(400)}s`], /ends after the year 9999/],
      [['tokens', 'issue', 'bob', '--ttl'], /^focus: --ttl needs a value \(focus tokens issue --help\)$/],
      [['tokens', 'issue', 'bob', '--name', 'a', '--name', 'b'], /^focus: --name given twice \(focus tokens issue --help\)$/],
      [['tokens', 'issue', 'bob', '--name', '   '], /^focus: --name must be 1–200 characters/],
      [['tokens', 'issue', 'bob', '--name', 'x'.repeat(201)], /^focus: --name must be 1–200 characters/],
      [['tokens', 'issue', 'bob', '--name', 'a\nb'], /^focus: --name must be .*without control characters \(focus tokens issue --help\)$/],
      [['tokens', 'issue'], /^focus: "tokens issue" needs <handle> \(focus tokens issue --help\)$/],
      [['tokens', 'issue', 'bob', 'carol'], /^focus: unexpected argument "carol" for "tokens issue" \(focus tokens issue --help\)$/],
      [['tokens', 'revoke', '-1'], /^focus: token id must be a whole number from 1 to 9007199254740991: -1 \(focus tokens revoke --help\)$/],
      [['tokens', 'revoke', '1e3'], /^focus: token id must be a whole number from 1 to 9007199254740991: 1e3 \(focus tokens revoke --help\)$/],
      [['tokens', 'revoke', '99999999999999999999'], /^focus: token id must be a whole number .*: 99999999999999999999 \(focus tokens revoke --help\)$/],
      [['tokens', 'list', 'Bob'], /^focus: handle must be .*: Bob \(focus tokens list --help\)$/],
      [['tokens', 'list', 'nobody'], /^focus: no user with handle nobody \(focus tokens list --help\)$/],
      [['tokens'], /^focus: missing command after "tokens": one of issue, list, revoke \(focus tokens --help\)$/],
      [['tokens', 'forge'], /^focus: unknown command "tokens forge" \(focus tokens --help\)$/],
      [['users', 'list', '--all'], /^focus: unknown option --all for "users list" \(focus users list --help\)$/],
      [['users', 'add', 'carol', '--org'], /^focus: --org needs a value \(focus users add --help\)$/],
      [['users', 'add', 'bob', '--org', '2', '--timezone', 'Mars/Base'], /^focus: --timezone must be an IANA time zone name such as Europe\/Berlin or UTC: Mars\/Base \(focus users add --help\)$/],
      [['users', 'add', 'bob', '--org', '2', '--timezone', '+02:00'], /^focus: --timezone must be an IANA time zone name .*: \+02:00 \(focus users add --help\)$/],
      [['users', 'add', 'bob', '--org', '2', '--timezone', 'UTC', '--timezone', 'Europe/Berlin'], /^focus: --timezone given twice \(focus users add --help\)$/],
      [['users', 'add', 'bob', '--org', '2', '--timezone'], /^focus: --timezone needs a value \(focus users add --help\)$/],
      [['migrate', 'now'], /^focus: unexpected argument "now" for "migrate" \(focus migrate --help\)$/],
      [['--colour'], /^focus: unknown option --colour \(focus --help\)$/],
    ];
    const results = await Promise.all(cases.map(([args]) => focusBin(env, ...args)));
    results.forEach((result, i) => {
      const [args, mentions] = cases[i] as [string[], RegExp];
      expect(result.code, args.join(' ')).toBe(2);
      expectOneLineFailure(result, mentions);
      // Our own words, never the parser's.
      expect(result.stderr).not.toMatch(/ambiguous|error:|ERR_|at .*\.js/);
    });
    expect(json(await focusBin(env, 'tokens', 'list'))).toEqual(before);
    expect(json(await focusBin(env, 'users', 'list'))).toEqual(usersBefore);
  }, 90_000);

  it('users list and tokens list show metadata only, never a token or its hash', async () => {
    const users = json(await focusBin(env, 'users', 'list'));
    expect(users).toEqual({
      data: [
        { handle: 'alice', org_ids: [1, 2, 3], timezone: 'UTC', disabled: false },
        { handle: 'bob', org_ids: [2], timezone: 'UTC', disabled: false },
      ],
    });
    const issued = json(await focusBin(env, 'tokens', 'issue', 'alice', '--name', 'listed', '--ttl', '1h')) as { id: number; token: string };
    expect((await me(issued.token)).statusCode).toBe(200);
    const listed = await focusBin(env, 'tokens', 'list');
    const all = json(listed) as { data: Record<string, unknown>[] };
    expect(listed.stdout).not.toContain(issued.token.slice(4));
    expect(listed.stdout).not.toMatch(/hash/);
    const row = all.data.find((t) => t.id === issued.id);
    expect(row).toEqual({
      id: issued.id,
      handle: 'alice',
      name: 'listed',
      created_at: expect.stringMatching(/Z$/),
      expires_at: expect.stringMatching(/Z$/),
      last_used_at: expect.stringMatching(/Z$/),
      revoked: false,
    });
    for (const t of all.data) expect(Object.keys(t).sort()).toEqual(['created_at', 'expires_at', 'handle', 'id', 'last_used_at', 'name', 'revoked']);
    expect(all.data.map((t) => t.id)).toEqual([...all.data.map((t) => t.id as number)].sort((a, b) => a - b));
    const bobs = json(await focusBin(env, 'tokens', 'list', 'bob')) as { data: { handle: string }[] };
    expect(bobs.data.length).toBeGreaterThan(0);
    expect(bobs.data.every((t) => t.handle === 'bob')).toBe(true);
    expect(bobs.data.length + all.data.filter((t) => t.handle === 'alice').length).toBe(all.data.length);
  }, 90_000);

  it('tokens revoke turns the token away; unknown ids fail', async () => {
    const issued = json(await focusBin(env, 'tokens', 'issue', 'alice', '--name', 'phone')) as { id: number; token: string };
    const other = json(await focusBin(env, 'tokens', 'issue', 'alice')) as { id: number; token: string };
    expect((await me(issued.token)).statusCode).toBe(200);

    const revoked = await focusBin(env, 'tokens', 'revoke', String(issued.id));
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toBe(`{"id":${issued.id},"revoked":true}\n`);

    const res = await me(issued.token);
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    const listed = json(await focusBin(env, 'tokens', 'list', 'alice')) as { data: { id: number; revoked: boolean }[] };
    expect(listed.data.find((t) => t.id === issued.id)?.revoked).toBe(true);
    expect(listed.data.find((t) => t.id === other.id)?.revoked).toBe(false);
    // Only that token.
    expect((await me(other.token)).statusCode).toBe(200);

    const [unknown, notANumber] = await Promise.all([
      focusBin(env, 'tokens', 'revoke', '999999'),
      focusBin(env, 'tokens', 'revoke', 'laptop'),
    ]);
    expectOneLineFailure(unknown, /999999/);
    expectOneLineFailure(notANumber, /token id/);
  }, 90_000);

  it('users add --timezone sets a home zone that sessions without one take; again it changes it, without it keeps it', async () => {
    expect(json(await focusBin(env, 'users', 'add', 'berta', '--org', '1', '--timezone', 'europe/berlin'))).toEqual({ handle: 'berta', org_ids: [1] });
    const { token } = json(await focusBin(env, 'tokens', 'issue', 'berta')) as { token: string };
    expect((await me(token)).json()).toEqual({ data: { handle: 'berta', org_ids: [1], timezone: 'Europe/Berlin', reminders: [5] } });
    const create = (schedule: string) =>
      app.inject({
        method: 'POST',
        url: '/api/v1/sessions',
        headers: { authorization: `Bearer ${token}` },
        payload: { org_id: 1, name: 'Standup', type: 'standard', duration: 15, schedule, time: '9:00 AM' },
      });
    const winter = (await create('2026-01-15')).json<{ data: { id: number; timezone: string; starts_at: string } }>().data;
    const summer = (await create('2026-07-15')).json<{ data: { timezone: string; starts_at: string } }>().data;
    expect([winter.timezone, winter.starts_at]).toEqual(['Europe/Berlin', '2026-01-15T08:00:00.000Z']);
    expect([summer.timezone, summer.starts_at]).toEqual(['Europe/Berlin', '2026-07-15T07:00:00.000Z']);

    // Adding an org without --timezone keeps the zone; a bad zone changes nothing, orgs included.
    expect(json(await focusBin(env, 'users', 'add', 'berta', '--org', '2'))).toEqual({ handle: 'berta', org_ids: [1, 2] });
    expectOneLineFailure(await focusBin(env, 'users', 'add', 'berta', '--org', '9', '--timezone', 'Europe/Berlln'), /IANA time zone .*: Europe\/Berlln \(focus users add --help\)$/);
    expect((json(await focusBin(env, 'users', 'list')) as { data: unknown[] }).data).toContainEqual({ handle: 'berta', org_ids: [1, 2], timezone: 'Europe/Berlin', disabled: false });

    // Run again with --timezone: the zone changes (the server sees it at once), earlier sessions stay put.
    expect(json(await focusBin(env, 'users', 'add', 'berta', '--org', '1', '--timezone', 'America/New_York'))).toEqual({ handle: 'berta', org_ids: [1, 2] });
    expect((await me(token)).json()).toEqual({ data: { handle: 'berta', org_ids: [1, 2], timezone: 'America/New_York', reminders: [5] } });
    const users = json(await focusBin(env, 'users', 'list')) as { data: { handle: string; timezone: string }[] };
    expect(users.data.map((u) => [u.handle, u.timezone])).toEqual([
      ['alice', 'UTC'],
      ['berta', 'America/New_York'],
      ['bob', 'UTC'],
    ]);
    const again = await app.inject({ url: `/api/v1/sessions/${winter.id}`, headers: { authorization: `Bearer ${token}` } });
    expect(again.json<{ data: { timezone: string; starts_at: string } }>().data).toMatchObject({ timezone: 'Europe/Berlin', starts_at: '2026-01-15T08:00:00.000Z' });
    const later = (await create('2026-01-15')).json<{ data: { timezone: string; starts_at: string } }>().data;
    expect([later.timezone, later.starts_at]).toEqual(['America/New_York', '2026-01-15T14:00:00.000Z']);
  }, 90_000);
});

describe('npx focus --help and --version', () => {
  const names = Object.values(VARIABLES).map((v) => v.name);

  it('print to stdout and exit 0; the help lists every command and every environment variable', async () => {
    const [help, short, version, v, helpCommand] = await Promise.all([
      focus({}, '--help'),
      focusBin({}, '-h'),
      focusBin({}, '--version'),
      focusBin({}, '-v'),
      focusBin({}, 'help'),
    ]);
    for (const result of [help, short, version, v, helpCommand]) {
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toBe('');
    }
    expect(short.stdout).toBe(help.stdout);
    expect(helpCommand.stdout).toBe(help.stdout);
    expect(v.stdout).toBe(version.stdout);
    for (const command of ['migrate', 'users add <handle> --org <id>', 'users list', 'tokens issue <handle>', 'tokens list [handle]', 'tokens revoke <id>', 'serve']) {
      expect(help.stdout).toContain(`focus ${command}`);
    }
    for (const name of names) expect(help.stdout).toMatch(new RegExp(`^  ${name}[ =]`, 'm'));
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(version.stdout).toBe(`${pkg.version}\n`);
  }, 60_000);

  it('per command: its own usage, options and result', async () => {
    const [issue, list, users, serve, helpServe, helpUsers] = await Promise.all([
      focusBin({}, 'tokens', 'issue', '--help'),
      focusBin({}, 'tokens', 'list', '-h'),
      focusBin({}, 'users', '--help'),
      focusBin({}, 'serve', '--help'),
      focusBin({}, 'help', 'serve'),
      focusBin({}, 'help', 'users'),
    ]);
    // `focus help <command>` is `focus <command> --help`.
    expect(helpServe.stdout).toBe(serve.stdout);
    expect(helpUsers.stdout).toBe(users.stdout);
    for (const result of [issue, list, users, serve]) {
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toBe('');
    }
    expect(issue.stdout).toMatch(/^Usage: focus tokens issue \[options\] <handle>/);
    expect(issue.stdout).toContain('--ttl <duration>');
    expect(issue.stdout).toContain('--name <label>');
    expect(issue.stdout).toContain('Prints {"id":1,"token":"fst_…"');
    expect(list.stdout).toMatch(/^Usage: focus tokens list \[options\] \[handle\]/);
    expect(users.stdout).toMatch(/add .*<handle>/);
    expect(users.stdout).toMatch(/list /);
    for (const name of names) expect(serve.stdout).toContain(name);
    // Help needs no database and touches none.
    expect(issue.stdout).not.toBe(list.stdout);
  }, 60_000);
});

describe('where the data is', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'focus-where-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a relative sqlite path names the same file from any directory of the installation', async () => {
    const file = join(dir, 'relative.db');
    const env = { DATABASE_URL: `sqlite:${relative(ROOT, file)}` };
    const fromRoot = json(await focusIn(ROOT, env, 'users', 'add', 'alice', '--org', '1'));
    expect(fromRoot).toEqual({ handle: 'alice', org_ids: [1] });
    const fromDocs = json(await focusIn(join(ROOT, 'docs'), env, 'migrate')) as { database: string };
    expect(fromDocs.database).toBe(`sqlite:${file}`);
    const fromElsewhere = json(await focusIn(dir, env, 'users', 'list'));
    expect(fromElsewhere).toEqual({ data: [{ handle: 'alice', org_ids: [1], timezone: 'UTC', disabled: false }] });
    expect(readdirSync(join(ROOT, 'docs')).some((f) => f === 'data' || f.endsWith('.db'))).toBe(false);
  }, 60_000);

  it('a missing directory is refused with one line, and not created', async () => {
    const missing = join(dir, 'nonexistent', 'dir');
    const results = await Promise.all([
      focusBin({ DATABASE_URL: `sqlite:${join(missing, 'x.db')}` }, 'migrate'),
      focusBin({ DATABASE_URL: `sqlite:${join(missing, 'x.db')}` }, 'users', 'add', 'alice', '--org', '1'),
      focusBin({ DATABASE_URL: `sqlite:${join(missing, 'x.db')}`, PORT: '0' }, 'serve'),
    ]);
    for (const result of results) {
      expectOneLineFailure(result, new RegExp(`^focus: invalid configuration: DATABASE_URL names a file in ${missing}, which does not exist`));
      expect(result.code).toBe(2);
    }
    expect(existsSync(join(dir, 'nonexistent'))).toBe(false);
  }, 60_000);
});

/* Invitations from the shell, on a database of their own (the suite above counts its users). */
describeEachDialect('npx focus invite', (dialect) => {
  const database = useTestDatabase(dialect);
  const env = (): Record<string, string> => ({ DATABASE_URL: database.url });

  it('users add --admin and invite: the first admin from the shell, a one-time link for everyone else', async () => {
    expect(json(await focusBin(env(), 'users', 'add', 'root', '--org', '7', '--admin'))).toEqual({ handle: 'root', org_ids: [7] });
    const invite = json(await focusBin({ ...env(), PUBLIC_URL: 'https://focus.example.com' }, 'invite', '7')) as { url: string; expires_at: string };
    expect(invite.url).toMatch(/^https:\/\/focus\.example\.com\/invite#\S{20,}$/);
    expect(Date.parse(invite.expires_at) - Date.now()).toBeGreaterThan(6.9 * 86_400_000);
    expectOneLineFailure(await focusBin(env(), 'invite', '999'), /no org with id 999/);
  }, 90_000);
});
