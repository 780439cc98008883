import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase, createTestDatabase } from '../helpers/harness.js';
import { buildOnce } from '../helpers/server-process.js';
import { judge, runOutageDrill, summarize } from './outage-drill.js';
import { report as printReport } from '../helpers/report.js';

/*
 * PostgreSQL goes away under load and comes back: /readyz and the API answer 503
 * problem+json meanwhile, and the same process serves again within seconds, unrestarted.
 * The server is shared with other suites, so the outage is scoped to a role of our own
 * (connection limit 0, its backends terminated); .ci/run also runs a real restart
 * (scripts/pg-restart-check.ts). Disruptive, hence opt-in: FOCUS_TEST_PG_RESTART=1.
 */

const enabled = process.env.TEST_DATABASE_URL !== undefined && process.env.FOCUS_TEST_PG_RESTART === '1';
const RECOVERY_BUDGET_MS = 5_000;

describe.skipIf(!enabled)('database outage under load [postgres]', () => {
  const role = `focus_outage_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  let database: TestDatabase;
  let admin: pg.Client;
  let serviceUrl: string;

  beforeAll(buildOnce, 180_000);

  beforeAll(async () => {
    database = await createTestDatabase('postgres');
    admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    const schema = /search_path=([a-z0-9_]+)/.exec(decodeURIComponent(database.url))?.[1];
    if (schema === undefined) throw new Error('test database URL names no schema');
    const dbName = new URL(database.url).pathname.slice(1);
    await admin.query(`create role ${role} login`);
    await admin.query(`grant all on schema ${schema} to ${role}`);
    await admin.query(`grant create on database ${dbName} to ${role}`);
    const url = new URL(database.url);
    url.username = role;
    url.searchParams.set('application_name', role);
    serviceUrl = url.toString();
  });

  afterAll(async () => {
    await admin.query(`alter role ${role} connection limit -1`).catch(() => undefined);
    await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where usename = $1`, [role]).catch(() => undefined);
    await database.drop();
    const dbName = new URL(database.url).pathname.slice(1);
    await admin.query(`revoke create on database ${dbName} from ${role}`).catch(() => undefined);
    await admin.query(`drop owned by ${role}`).catch(() => undefined);
    await admin.query(`drop role if exists ${role}`);
    await admin.end();
  });

  it('answers 503 during the outage and recovers by itself', async () => {
    const report = await runOutageDrill({
      databaseUrl: serviceUrl,
      outageMs: 1_500,
      recoveryBudgetMs: RECOVERY_BUDGET_MS,
      disrupt: async () => {
        await admin.query(`alter role ${role} connection limit 0`);
        await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where usename = $1`, [role]);
      },
      restore: async () => {
        await admin.query(`alter role ${role} connection limit -1`);
      },
    });
    const summary = JSON.stringify({ ...summarize(report), recoveredInMs: report.recoveredInMs });
    printReport(`outage drill: ${summary}\n`);
    expect(judge(report, RECOVERY_BUDGET_MS), summary).toEqual([]);
    // The process kept its logs clean of crashes: no fatal line, no uncaught exception.
    expect(report.serverOutput.filter((l) => /"level":60|uncaught/i.test(l))).toEqual([]);
  }, 30_000);
});
