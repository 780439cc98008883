import type { FastifyInstance } from 'fastify';
import { CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestDatabase, createTestDatabase, describeEachDialect, testConfig } from '../../../test/helpers/harness.js';
import { http } from '../../../test/helpers/http.js';
import { sessionRow } from '../../../test/helpers/session-row.js';
import { StatementCapture } from '../../../test/helpers/statements.js';
import { buildApp } from '../../app/app.js';
import { type Storage, openStorage } from '../../storage/database.js';
import { createAuthService } from '../auth/auth.service.js';

/*
 * Contract section 13, search timing (issue 34, M3): how long a keyword search takes
 * reveals nothing of other tenants' sessions. Shown without a stopwatch: the statements a
 * reader's keyword listing runs (their SQL and every parameter) and, on PostgreSQL, the
 * rows each one touches are the same whether another org's 1,500 private sessions are
 * named with the word or without it (the same rows otherwise, so only the match differs).
 */

const session = (name: string, isPublic: boolean, orgId: number) => ({ org_id: orgId, name, type: 'standard', duration: 30, schedule: '2027-05-03', time: '9:00 AM', is_public: isPublic });
const LISTINGS = ['/api/v1/sessions?keyword=layoffs', '/api/v1/sessions?keyword=layoffs&date=2027-05-03', '/api/v1/sessions?keyword=LAYOFFS&source=user'];

/** Sums what a PostgreSQL plan node and its children read: rows produced over every loop, and rows a filter dropped. */
function rowsTouched(node: Record<string, unknown>): number {
  const own = Number(node['Actual Rows'] ?? 0) * Number(node['Actual Loops'] ?? 1) + Number(node['Rows Removed by Filter'] ?? 0) + Number(node['Rows Removed by Index Recheck'] ?? 0);
  return own + ((node.Plans as Record<string, unknown>[] | undefined) ?? []).reduce((n, child) => n + rowsTouched(child), 0);
}

describeEachDialect('keyword search: no timing oracle across tenants', (dialect) => {
  let database: TestDatabase;
  let storage: Storage;
  let app: FastifyInstance;
  let base = '';
  const capture = new StatementCapture();
  const tokens: Record<string, string> = {};
  let bobId = 0;
  let carolsSession = 0;

  beforeAll(async () => {
    database = await createTestDatabase(dialect);
    storage = openStorage({ databaseUrl: database.url }, { plugins: [capture] });
    await storage.migrate();
    app = await buildApp({ config: testConfig(database.url), storage, logger: false });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    const auth = createAuthService(storage);
    for (const [handle, org] of [['alice', 1], ['bob', 2], ['carol', 3]] as const) {
      await auth.addUser(handle, [org]);
      tokens[handle] = (await auth.issueToken(handle)).token;
    }
    const carols = await http(base, 'POST', '/api/v1/sessions', tokens.carol, session('unrelated', true, 3));
    carolsSession = (carols.body as { data: { id: number } }).data.id;
    bobId = (await storage.db.selectFrom('users').select('id').where('handle', '=', 'bob').executeTakeFirstOrThrow()).id;
    for (const [name, isPublic] of [['Weekly layoffs sync', true], ['my layoffs notes', false], ['Deep work', true]] as const) {
      expect((await http(base, 'POST', '/api/v1/sessions', tokens.alice, session(name, isPublic, 1))).status).toBe(201);
    }
  });
  afterAll(async () => {
    await app.close();
    await storage.close();
    await database.drop();
  });

  /** What alice's keyword listings answer, the statements they ran, and (PostgreSQL) the rows those touched. */
  async function measure() {
    // A write first, every time: whatever caches follow the data version start alike.
    expect((await http(base, 'PUT', `/api/v1/sessions/${carolsSession}`, tokens.carol, { name: `unrelated ${Date.now()}` })).status).toBe(200);
    // Fresh statistics and visibility maps, so that the planner sees both states alike.
    if (dialect === 'postgres') await sql`vacuum analyze`.execute(storage.db);
    // Once before measuring: rows kept from an earlier page (sessions.repository.ts) are kept in both states alike.
    for (const path of LISTINGS) expect((await http(base, 'GET', path, tokens.alice)).status).toBe(200);
    capture.reset();
    const answers = [];
    for (const path of LISTINGS) {
      const res = await http(base, 'GET', path, tokens.alice);
      expect(res.status).toBe(200);
      answers.push((res.body as { data: { name: string }[] }).data.map((s) => s.name));
    }
    const statements = capture.compiled(storage.db).filter((q) => /session/.test(q.sql) && !/tokens/.test(q.sql));
    capture.reset();
    // The least of three runs: PostgreSQL's planner now and then picks a costlier plan for
    // a statement whatever the data's names (statistics sampling), which is not what is measured here.
    let touched = Number.POSITIVE_INFINITY;
    if (dialect === 'postgres') {
      for (let run = 0; run < 3; run++) {
        let sum = 0;
        for (const q of statements) {
          const plan = await storage.db.executeQuery<{ 'QUERY PLAN': { Plan: Record<string, unknown> }[] }>(CompiledQuery.raw(`explain (analyze, format json) ${q.sql}`, [...q.parameters]));
          sum += rowsTouched(plan.rows[0]?.['QUERY PLAN'][0]?.Plan ?? {});
        }
        touched = Math.min(touched, sum);
      }
    }
    // Statements that run side by side come back in either order.
    return { answers, statements: statements.map((q) => JSON.stringify([q.sql, q.parameters])).sort(), touched };
  }

  it("runs the same statements, touching the same rows, whether another org's private sessions match or not", async () => {
    const rows = Array.from({ length: 1_500 }, () => sessionRow('Q3 budget planning', bobId, { org_id: 2, is_public: 0 }));
    for (let i = 0; i < rows.length; i += 200) await storage.db.insertInto('sessions').values(rows.slice(i, i + 200)).execute();
    // Each state written the same way (one update of every row), one letter apart.
    const rename = (name: string) => storage.db.updateTable('sessions').set({ name, search_name: name.toLowerCase() }).where('org_id', '=', 2).execute();
    await rename('Q3 layoffz planning (CONFIDENTIAL)');
    const without = await measure();
    expect(without.answers[0]).toEqual(['Weekly layoffs sync', 'my layoffs notes']);

    // The same rows, now every one of them named with the word alice searches.
    await rename('Q3 layoffs planning (CONFIDENTIAL)');
    const matching = await measure();

    expect(matching.answers).toEqual(without.answers);
    expect(matching.statements).toEqual(without.statements);
    expect(matching.touched).toBe(without.touched);
  }, 60_000);
});
