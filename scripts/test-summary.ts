/*
 * Reads vitest's JSON report and prints how many tests ran on each dialect, so that a
 * PostgreSQL run that quietly did nothing is visible. Under CI=true it fails when no
 * PostgreSQL test ran or any was skipped.
 *
 *   node --import tsx scripts/test-summary.ts <vitest-json-report> [<another-report> …]
 *
 * Several reports are merged: a test skipped in one run (e.g. the PostgreSQL stop
 * test in the parallel run) counts as covered when another run passed it.
 */
import { readFileSync } from 'node:fs';

interface Assertion {
  fullName: string;
  status: string;
}
interface Report {
  success: boolean;
  testResults: { name: string; assertionResults: Assertion[] }[];
}

type Bucket = 'sqlite' | 'postgres' | 'no database';
const bucketOf = (name: string): Bucket => (name.includes('[postgres]') ? 'postgres' : name.includes('[sqlite]') ? 'sqlite' : 'no database');

const rank: Record<string, number> = { failed: 3, passed: 2, skipped: 1 };

function main(paths: string[]): number {
  if (paths.length === 0) {
    process.stderr.write('usage: test-summary <vitest-json-report> [<another-report> …]\n');
    return 2;
  }
  const reports = paths.map((p) => JSON.parse(readFileSync(p, 'utf8')) as Report);
  // One status per test: a failure anywhere wins, then a pass, then a skip.
  const merged = new Map<string, string>();
  for (const report of reports) {
    for (const file of report.testResults) {
      for (const test of file.assertionResults) {
        const key = `${file.name}\u0000${test.fullName}`;
        const status = test.status === 'pending' || test.status === 'todo' ? 'skipped' : test.status;
        const previous = merged.get(key);
        if (previous === undefined || (rank[status] ?? 0) > (rank[previous] ?? 0)) merged.set(key, status);
      }
    }
  }
  const counts = new Map<Bucket, Record<string, number>>();
  const skippedPostgres: string[] = [];
  for (const [key, status] of merged) {
    const fullName = key.split('\u0000')[1] ?? key;
    const bucket = bucketOf(fullName);
    const row = counts.get(bucket) ?? {};
    row[status] = (row[status] ?? 0) + 1;
    counts.set(bucket, row);
    if (bucket === 'postgres' && status === 'skipped') skippedPostgres.push(fullName);
  }
  const line = (bucket: Bucket) => {
    const row = counts.get(bucket) ?? {};
    const parts = ['passed', 'failed', 'skipped'].map((s) => `${row[s] ?? 0} ${s}`);
    return `  ${bucket.padEnd(11)} ${parts.join(', ')}`;
  };
  process.stdout.write(`\ntests per dialect:\n${(['sqlite', 'postgres', 'no database'] as const).map(line).join('\n')}\n`);

  const problems: string[] = [];
  if (process.env.CI === 'true') {
    if ((counts.get('postgres')?.passed ?? 0) === 0) problems.push('no PostgreSQL test passed (is TEST_DATABASE_URL set?)');
    if (skippedPostgres.length > 0) problems.push(`PostgreSQL tests skipped in CI:\n    ${skippedPostgres.join('\n    ')}`);
  }
  for (const p of problems) process.stdout.write(`test-summary: FAIL ${p}\n`);
  const total = (status: string) => [...counts.values()].reduce((n, row) => n + (row[status] ?? 0), 0);
  process.stdout.write(`tests: ${total('passed')} passed, ${total('failed')} failed, ${total('skipped')} skipped\n`);
  return problems.length === 0 && reports.every((r) => r.success) ? 0 : 1;
}

process.exit(main(process.argv.slice(2)));
