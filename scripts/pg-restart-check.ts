/*
 * CI drill: a real PostgreSQL stop and start under load (`.ci/run` runs it after the test
 * suite, when nothing else uses the server). A `focus serve` process must answer 503
 * problem+json while the database is down, /readyz must say 503, and the same process
 * must serve again within seconds of PostgreSQL accepting connections.
 *
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node --import tsx scripts/pg-restart-check.ts
 *
 * FOCUS_PG_STOP_CMD / FOCUS_PG_START_CMD override how the server is stopped and started
 * (default: pg_ctlcluster on the machine's only cluster).
 */
import { execSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import pg from 'pg';
import { buildOnce } from '../test/helpers/server-process.js';
import { judge, runOutageDrill, summarize } from '../test/multi-instance/outage-drill.js';

const RECOVERY_BUDGET_MS = 10_000;

function cluster(action: 'stop -m fast' | 'start'): string {
  const version = readdirSync('/etc/postgresql')[0];
  if (version === undefined) throw new Error('no cluster under /etc/postgresql');
  return `pg_ctlcluster --skip-systemctl-redirect ${version} main ${action}`;
}

async function untilAccepting(url: string, budgetMs: number): Promise<void> {
  const deadline = Date.now() + budgetMs;
  for (;;) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('select 1');
      await client.end();
      return;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

async function main(): Promise<number> {
  const base = process.env.TEST_DATABASE_URL;
  if (base === undefined) {
    process.stderr.write('pg-restart-check: TEST_DATABASE_URL is not set\n');
    return 2;
  }
  await buildOnce();
  const stop = process.env.FOCUS_PG_STOP_CMD ?? cluster('stop -m fast');
  const start = process.env.FOCUS_PG_START_CMD ?? cluster('start');
  const schema = `restart_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const admin = async (query: string) => {
    const client = new pg.Client({ connectionString: base });
    await client.connect();
    try {
      await client.query(query);
    } finally {
      await client.end();
    }
  };
  await admin(`create schema ${schema}`);
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema},public`);
  try {
    const report = await runOutageDrill({
      databaseUrl: url.toString(),
      outageMs: 2_000,
      recoveryBudgetMs: RECOVERY_BUDGET_MS,
      disrupt: () => {
        execSync(stop, { stdio: 'inherit' });
        return Promise.resolve();
      },
      restore: async () => {
        execSync(start, { stdio: 'inherit' });
        await untilAccepting(base, 30_000);
      },
    });
    const problems = judge(report, RECOVERY_BUDGET_MS);
    process.stdout.write(`pg-restart-check: ${JSON.stringify({ ...summarize(report), recoveredInMs: report.recoveredInMs })}\n`);
    for (const p of problems) process.stdout.write(`pg-restart-check: FAIL ${p}\n`);
    if (problems.length === 0) process.stdout.write('pg-restart-check: OK (503 problem+json while down, serving again after restart)\n');
    return problems.length === 0 ? 0 : 1;
  } finally {
    await untilAccepting(base, 30_000).catch(() => execSync(start, { stdio: 'inherit' }));
    await admin(`drop schema if exists ${schema} cascade`);
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`pg-restart-check: failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
