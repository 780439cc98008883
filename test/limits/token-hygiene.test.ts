import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { type KyselyPlugin, sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../src/app/app.js';
import { createAuthService } from '../../src/features/auth/auth.service.js';
import { generateToken, hashToken } from '../../src/features/auth/auth.token.js';
import { type Storage, openStorage } from '../../src/storage/database.js';
import { createTestDatabase, describeEachDialect, testConfig, useTestDatabase } from '../helpers/harness.js';
import { startServer } from '../helpers/server-process.js';

/** Counts every statement the app sends, through Kysely's own plugin interface. */
function countingStorage(storage: Storage): { storage: Storage; queries: () => number } {
  let n = 0;
  const counter: KyselyPlugin = {
    transformQuery: (args) => {
      n++;
      return args.node;
    },
    transformResult: (args) => Promise.resolve(args.result),
  };
  return { storage: { ...storage, db: storage.db.withPlugin(counter) }, queries: () => n };
}

describeEachDialect('token hygiene', (dialect) => {
  const database = useTestDatabase(dialect);
  let storage: Storage;
  let app: FastifyInstance;
  let queries: () => number;
  let valid: string;

  beforeAll(async () => {
    storage = openStorage({ databaseUrl: database.url });
    const counting = countingStorage(storage);
    queries = counting.queries;
    app = await buildApp({ config: testConfig(database.url), storage: counting.storage, logger: false });
    await app.ready();
    await createAuthService(storage).addUser('alice', [1]);
    valid = (await createAuthService(storage).issueToken('alice')).token;
  });
  afterAll(async () => {
    await app.close();
    await storage.close();
  });

  const me = async (token: string) => {
    const before = queries();
    const res = await app.inject({ method: 'GET', url: '/api/v1/me', headers: { authorization: `Bearer ${token}` } });
    return { status: res.statusCode, body: res.json<Record<string, unknown>>(), www: res.headers['www-authenticate'], queries: queries() - before };
  };

  it('rejects a token with a typo by its checksum, before any database query', async () => {
    const ok = await me(valid);
    expect(ok.status).toBe(200);
    expect(ok.queries).toBeGreaterThan(0);
    // Each single-character change of the random part breaks the CRC-32 checksum.
    for (const position of [4, 10, 20, 35, valid.length - 1]) {
      const c = valid[position] as string;
      const typo = valid.slice(0, position) + (c === 'a' ? 'b' : 'a') + valid.slice(position + 1);
      const res = await me(typo);
      expect(res.status).toBe(401);
      expect(res.queries).toBe(0);
    }
    for (const junk of ['fst_', 'fst_short', 'x'.repeat(300), `${valid}x`, valid.toUpperCase()]) expect((await me(junk)).queries).toBe(0);
    // A well-formed but unknown token is looked up: the counter really sees queries.
    const unknown = await me(generateToken());
    expect(unknown.status).toBe(401);
    expect(unknown.queries).toBe(1);
  });

  it('answers expired, revoked and unknown tokens exactly alike', async () => {
    const revoked = await createAuthService(storage).issueToken('alice');
    await createAuthService(storage).revokeToken(revoked.id);
    const expired = await createAuthService(storage).issueToken('alice', { ttl: '1s' });
    expect((await me(expired.token)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const answers = await Promise.all([revoked.token, expired.token, generateToken()].map(me));
    for (const a of answers) {
      expect(a.status).toBe(401);
      expect({ body: a.body, www: a.www }).toEqual({ body: answers[2]?.body, www: answers[2]?.www });
    }
    expect(answers[0]?.www).toContain('invalid_token');
  });

  it('stores only the hash: the raw token is nowhere in the database', async () => {
    const secret = valid.slice('fst_'.length);
    let dump: string;
    if (dialect === 'sqlite') {
      await sql`pragma wal_checkpoint(FULL)`.execute(storage.db);
      const dir = dirname(database.url.slice('sqlite:'.length));
      dump = readdirSync(dir)
        .map((f) => readFileSync(join(dir, f)).toString('latin1'))
        .join('\n');
    } else {
      const tables = await storage.db.introspection.getTables();
      const rows = await Promise.all(tables.map((t) => sql`select * from ${sql.table(t.name)}`.execute(storage.db)));
      dump = JSON.stringify(rows.map((r) => r.rows));
    }
    expect(dump).toContain(hashToken(valid));
    expect(dump).not.toContain(secret);
  });
});

describeEachDialect('tokens in logs', (dialect) => {
  it('never writes a token to the logs, even at trace level', async () => {
    const database = await createTestDatabase(dialect);
    const storage = openStorage({ databaseUrl: database.url });
    await storage.migrate();
    await createAuthService(storage).addUser('alice', [1]);
    const token = (await createAuthService(storage).issueToken('alice')).token;
    await storage.close();
    // Straight from the sources: this suite needs no build.
    const server = await startServer({ DATABASE_URL: database.url, LOG_LEVEL: 'trace', RATE_LIMIT: '600' }, { from: 'source' });
    try {
      const base = server.url;
      const auth = (t: string) => ({ authorization: `Bearer ${t}` });
      expect((await fetch(`${base}/api/v1/me`, { headers: auth(token) })).status).toBe(200);
      const typo = `${token.slice(0, -1)}${token.endsWith('a') ? 'b' : 'a'}`;
      expect((await fetch(`${base}/api/v1/me`, { headers: auth(typo) })).status).toBe(401);
      expect((await fetch(`${base}/api/v1/sessions`, { method: 'POST', headers: { ...auth(token), 'content-type': 'application/json' }, body: '{bad' })).status).toBe(400);
      expect((await fetch(`${base}/api/v1/nope`, { headers: auth(token) })).status).toBe(404);
    } finally {
      await server.stop();
      await database.drop();
    }
    const logs = server.output.join('\n');
    // The capture is real: every request was logged.
    expect(logs.match(/"msg":"incoming request"/g)?.length).toBeGreaterThanOrEqual(4);
    expect(logs).toContain('/api/v1/me');
    expect(logs).not.toContain(token.slice('fst_'.length, 'fst_'.length + 32));
  });
});
