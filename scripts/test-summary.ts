/*
 * Reads vitest's JSON report and prints how many tests ran on each dialect, so that a
 * PostgreSQL run that quietly did nothing is visible. Under CI=true it fails when no
 * PostgreSQL test ran or any was skipped.
 *
 *   node --import tsx scripts/test-summary.ts <vitest-json-report>
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

function main(path: string | undefined): number {
  if (path === undefined) {
    process.stderr.write('usage: test-summary <vitest-json-report>\n');
    return 2;
  }
  const report = JSON.parse(readFileSync(path, 'utf8')) as Report;
  const counts = new Map<Bucket, Record<string, number>>();
  const skippedPostgres: string[] = [];
  for (const file of report.testResults) {
    for (const test of file.assertionResults) {
      const bucket = bucketOf(test.fullName);
      const status = test.status === 'pending' || test.status === 'todo' ? 'skipped' : test.status;
      const row = counts.get(bucket) ?? {};
      row[status] = (row[status] ?? 0) + 1;
      counts.set(bucket, row);
      if (bucket === 'postgres' && status === 'skipped') skippedPostgres.push(test.fullName);
    }
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
  return problems.length === 0 && report.success ? 0 : 1;
}

process.exit(main(process.argv[2]));
