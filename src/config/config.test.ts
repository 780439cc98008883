import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ENV_TABLE_END, ENV_TABLE_START, environmentExample, environmentHelp, environmentMarkdown } from './config.docs.js';
import { ConfigError, describeDatabase, loadConfig, prepareDatabaseLocation } from './config.js';
import { DEFAULT_DATA_DIR, PACKAGE_ROOT, VARIABLES } from './config.variables.js';

const names = Object.values(VARIABLES).map((v) => v.name);

const refusal = (env: Record<string, string>): string => {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
};

describe('loadConfig', () => {
  it('applies every default of the table when nothing is set (empty counts as unset)', () => {
    expect(loadConfig({ PORT: '' })).toEqual({
      databaseUrl: `sqlite:${join(PACKAGE_ROOT, 'data', 'focus.db')}`,
      port: 8080,
      host: '127.0.0.1',
      logLevel: 'info',
      rateLimit: 600,
      redisUrl: null,
      poolSize: 10,
      connectTimeoutMs: 5000,
      statementTimeoutMs: 10000,
      trustProxy: false,
      publicUrl: null,
      oidcIssuer: null,
      oidcClientId: null,
      oidcClientSecret: null,
      headersTimeoutMs: 30000,
      bodyTimeoutMs: 30000,
      webhookAllowPrivate: false,
      webhookRetryScale: 1,
      webhookDnsServers: [],
      drainTimeoutMs: 10000,
      eventsHeartbeatMs: 15000,
      eventsPollMs: 250,
      eventsMaxStreams: 2000,
      eventsStreamsPerToken: 5,
    });
  });

  it('names each bad variable with what it accepts, all of them in one message', () => {
    expect(refusal({ PORT: '65536' })).toBe('invalid configuration: PORT (0–65535)');
    expect(refusal({ PORT: '8080.5' })).toBe('invalid configuration: PORT (0–65535)');
    for (const host of ['bogus..host', '999.1.1.1', '-x.example', 'host name', 'a'.repeat(64)]) {
      expect(refusal({ HOST: host })).toBe('invalid configuration: HOST (an IP address or a host name)');
    }
    for (const host of ['0.0.0.0', '::', '::1', 'localhost', 'focus-1.internal', 'api.example.com']) expect(loadConfig({ HOST: host }).host).toBe(host);
    expect(refusal({ DATABASE_URL: 'mysql://x' })).toBe('invalid configuration: DATABASE_URL (sqlite:<path>, sqlite::memory: or postgres://…)');
    expect(refusal({ LOG_LEVEL: 'loud' })).toBe('invalid configuration: LOG_LEVEL (fatal|error|warn|info|debug|trace|silent)');
    expect(refusal({ RATE_LIMIT: '-1' })).toBe('invalid configuration: RATE_LIMIT (requests per minute, 0 = off)');
    expect(refusal({ REDIS_URL: 'localhost:6379' })).toBe('invalid configuration: REDIS_URL (redis://… or rediss://…)');
    expect(refusal({ DB_POOL_SIZE: '0' })).toBe('invalid configuration: DB_POOL_SIZE (1–1000)');
    expect(refusal({ WEBHOOK_ALLOW_PRIVATE: 'yes' })).toBe('invalid configuration: WEBHOOK_ALLOW_PRIVATE (0 or 1)');
    expect(refusal({ PUBLIC_URL: 'ftp://focus.example.com' })).toBe('invalid configuration: PUBLIC_URL (an http(s) URL without query or fragment)');
    expect(refusal({ PUBLIC_URL: 'https://focus.example.com/?x=1' })).toBe('invalid configuration: PUBLIC_URL (an http(s) URL without query or fragment)');
    expect(loadConfig({ PUBLIC_URL: 'https://Focus.Example.com/base/' }).publicUrl).toBe('https://focus.example.com/base');
    expect(refusal({ WEBHOOK_RETRY_SCALE: '2' })).toBe('invalid configuration: WEBHOOK_RETRY_SCALE (a number > 0 and ≤ 1)');
    expect(refusal({ DB_CONNECT_TIMEOUT_MS: '99' })).toBe('invalid configuration: DB_CONNECT_TIMEOUT_MS (≥ 100)');
    expect(refusal({ DB_STATEMENT_TIMEOUT_MS: 'soon' })).toBe('invalid configuration: DB_STATEMENT_TIMEOUT_MS (≥ 100)');
    expect(refusal({ TRUST_PROXY: 'yes' })).toBe('invalid configuration: TRUST_PROXY (0, false, a hop count, or proxy addresses/CIDRs separated by commas)');
    expect(refusal({ PORT: 'x', LOG_LEVEL: 'x', DB_POOL_SIZE: '99999999999999999999' })).toBe(
      'invalid configuration: PORT (0–65535), LOG_LEVEL (fatal|error|warn|info|debug|trace|silent), DB_POOL_SIZE (1–1000)',
    );
  });

  it('takes single sign-on as all three OIDC variables or none; an http issuer only on a loopback host', () => {
    const sso = { OIDC_ISSUER: 'https://id.example.com/realms/x', OIDC_CLIENT_ID: 'focus', OIDC_CLIENT_SECRET: 's3cret' };
    expect(loadConfig(sso)).toMatchObject({ oidcIssuer: 'https://id.example.com/realms/x', oidcClientId: 'focus', oidcClientSecret: 's3cret' });
    expect(loadConfig({ ...sso, OIDC_ISSUER: 'http://127.0.0.1:9000' }).oidcIssuer).toBe('http://127.0.0.1:9000');
    expect(refusal({ ...sso, OIDC_ISSUER: 'http://id.example.com' })).toBe('invalid configuration: OIDC_ISSUER (an https URL (http only for a loopback host))');
    expect(refusal({ ...sso, OIDC_CLIENT_SECRET: '' })).toBe('invalid configuration: OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET are set together or not at all');
  });

  it('reads TRUST_PROXY as off, a hop count, or proxy addresses', () => {
    for (const off of ['0', 'false', '']) expect(loadConfig({ TRUST_PROXY: off }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy).toEqual(['10.0.0.0/8', '127.0.0.1']);
  });

  describe('a relative sqlite path', () => {
    const cwd = process.cwd();
    afterEach(() => process.chdir(cwd));

    it('is relative to the installation, whatever the current directory', () => {
      const elsewhere = mkdtempSync(join(tmpdir(), 'focus-cwd-'));
      try {
        const fromRoot = loadConfig({ DATABASE_URL: 'sqlite:./data/focus.db' }).databaseUrl;
        process.chdir(elsewhere);
        expect(loadConfig({ DATABASE_URL: 'sqlite:./data/focus.db' }).databaseUrl).toBe(fromRoot);
        expect(loadConfig({ DATABASE_URL: 'sqlite:data/focus.db' }).databaseUrl).toBe(fromRoot);
        expect(fromRoot).toBe(`sqlite:${join(PACKAGE_ROOT, 'data', 'focus.db')}`);
      } finally {
        process.chdir(cwd);
        rmSync(elsewhere, { recursive: true, force: true });
      }
    });

    it('leaves absolute paths, sqlite:/// URLs, memory and PostgreSQL as they are', () => {
      expect(loadConfig({ DATABASE_URL: 'sqlite:/var/lib/focus/focus.db' }).databaseUrl).toBe('sqlite:/var/lib/focus/focus.db');
      expect(loadConfig({ DATABASE_URL: 'sqlite:///var/lib/focus/focus.db' }).databaseUrl).toBe('sqlite:/var/lib/focus/focus.db');
      expect(loadConfig({ DATABASE_URL: 'sqlite::memory:' }).databaseUrl).toBe('sqlite::memory:');
      expect(loadConfig({ DATABASE_URL: 'postgres://u:p@h/db' }).databaseUrl).toBe('postgres://u:p@h/db');
    });
  });
});

describe('prepareDatabaseLocation', () => {
  it('refuses a directory that does not exist, and creates none', () => {
    const base = mkdtempSync(join(tmpdir(), 'focus-loc-'));
    try {
      const config = loadConfig({ DATABASE_URL: `sqlite:${join(base, 'missing', 'dir', 'x.db')}` });
      expect(() => prepareDatabaseLocation(config)).toThrow(ConfigError);
      expect(() => prepareDatabaseLocation(config)).toThrow(`${join(base, 'missing', 'dir')}, which does not exist`);
      expect(readdirSync(base)).toEqual([]);
      // An existing directory, memory and PostgreSQL need nothing.
      prepareDatabaseLocation(loadConfig({ DATABASE_URL: `sqlite:${join(base, 'x.db')}` }));
      prepareDatabaseLocation(loadConfig({ DATABASE_URL: 'sqlite::memory:' }));
      prepareDatabaseLocation(loadConfig({ DATABASE_URL: 'postgres://h/db' }));
      expect(readdirSync(base)).toEqual([]);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('the default data/ directory is the one it may create', () => {
    expect(loadConfig({}).databaseUrl).toBe(`sqlite:${join(DEFAULT_DATA_DIR, 'focus.db')}`);
    if (!existsSync(DEFAULT_DATA_DIR)) {
      prepareDatabaseLocation(loadConfig({}));
      expect(existsSync(DEFAULT_DATA_DIR)).toBe(true);
      rmSync(DEFAULT_DATA_DIR, { recursive: true });
    }
  });
});

describe('describeDatabase', () => {
  it('hides a PostgreSQL password and keeps a SQLite path', () => {
    expect(describeDatabase('postgres://focus:s3cret@db:5432/focus?options=-c%20x')).toBe('postgres://focus:***@db:5432/focus');
    expect(describeDatabase('sqlite:/var/lib/focus/focus.db')).toBe('sqlite:/var/lib/focus/focus.db');
  });
});

describe('the environment table is the one source', () => {
  it("README.md's configuration table is rendered from it (npm run docs:env)", () => {
    const readme = readFileSync(join(PACKAGE_ROOT, 'README.md'), 'utf8');
    const start = readme.indexOf(ENV_TABLE_START);
    const end = readme.indexOf(ENV_TABLE_END);
    expect(start, 'README.md lacks the table markers').toBeGreaterThan(-1);
    expect(readme.slice(start + ENV_TABLE_START.length, end).trim(), 'README table out of date: npm run docs:env').toBe(environmentMarkdown());
  });

  it('.env.example is rendered from it', () => {
    expect(readFileSync(join(PACKAGE_ROOT, '.env.example'), 'utf8'), '.env.example out of date: npm run docs:env').toBe(environmentExample());
  });

  it('the CLI help describes every variable, and the README table lists exactly the table', () => {
    const help = environmentHelp();
    for (const name of names) expect(help).toMatch(new RegExp(`^  ${name}[ =]`, 'm'));
    expect([...environmentMarkdown().matchAll(/^\| `([A-Z_]+)`/gm)].map((m) => m[1])).toEqual(names);
  });

  it("docs/deployment.md's settings table names only variables of the table", () => {
    const deployment = readFileSync(join(PACKAGE_ROOT, 'docs', 'deployment.md'), 'utf8');
    const section = deployment.slice(deployment.indexOf('## Settings that matter'));
    const named = [...section.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]);
    expect(named.length).toBeGreaterThan(0);
    for (const name of named) expect(names).toContain(name);
  });

  it('no production file reads the environment except through it', () => {
    const src = join(PACKAGE_ROOT, 'src');
    const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter(
      (f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.startsWith('config'),
    );
    const readers = files.filter((f) => /process\.env\b/.test(readFileSync(join(src, f), 'utf8')));
    expect(readers, `read the environment in src/config/ only: ${readers.join(', ')}`).toEqual([]);
    expect(relative(PACKAGE_ROOT, DEFAULT_DATA_DIR)).toBe('data');
  });
});
