import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { CHROMIUM, CHROMIUM_SKIP_NOTICE, chromiumAvailable } from './browser.js';

/**
 * Says once, loudly, which external services this run covers and which it skips; on
 * PostgreSQL, installs pg_trgm once up front. Migrations create it when missing, but test
 * files migrating side by side on a fresh server would race to create it, and one made
 * by a test's throwaway role would vanish with that role.
 */
export default async function setup(): Promise<() => void> {
  // Every temporary file of the run (databases, templates, servers' and browsers' own) goes under one
  // directory, removed when the run ends: workers are stopped without their 'exit' handlers running,
  // which left a migrated template behind per worker. Workers and their children inherit TMPDIR.
  const runDir = mkdtempSync(join(tmpdir(), 'focus-run-'));
  process.env.TMPDIR = runDir;
  const pgUrl = process.env.TEST_DATABASE_URL;
  const redis = process.env.TEST_REDIS_URL;
  const lines = [
    pgUrl ? `PostgreSQL: every storage and HTTP suite also runs against ${pgUrl.replace(/\/\/[^@]*@/, '//***@')}` : 'PostgreSQL: SKIPPED (set TEST_DATABASE_URL=postgres://… to run every suite on PostgreSQL too)',
    redis ? `Redis: shared rate-limit suites run against ${redis}` : 'Redis: SKIPPED (set TEST_REDIS_URL=redis://… to run the shared rate-limit suites)',
    chromiumAvailable() ? `Browser: the /docs page is driven in ${CHROMIUM}` : CHROMIUM_SKIP_NOTICE,
  ];
  // `npm test` is the fast project; the slow one (server processes, browser, restarts) runs in .ci/run.
  const argv = process.argv.join(' ');
  if (/--project[= ]fast\b/.test(argv)) lines.push('Slow suites: SKIPPED (server processes, browser, restarts, wall-clock waits: `npm run test:slow`, or .ci/run for everything)');
  else if (/--project[= ]slow\b/.test(argv)) lines.push('Slow suites only (the fast ones: `npm test`)');
  process.stderr.write(`\n${lines.map((l) => `  ${l}`).join('\n')}\n\n`);
  // In CI a skipped PostgreSQL run is a broken pipeline, not a quiet success.
  if (process.env.CI === 'true' && !pgUrl) throw new Error('CI=true but TEST_DATABASE_URL is not set: PostgreSQL suites would be skipped');
  if (process.env.CI === 'true' && !chromiumAvailable()) throw new Error(`CI=true but ${CHROMIUM} is missing: the browser test would be skipped`);
  if (pgUrl) {
    const client = new Client({ connectionString: pgUrl });
    await client.connect();
    try {
      await client.query('create extension if not exists pg_trgm with schema public');
    } finally {
      await client.end();
    }
  }
  return () => rmSync(runDir, { recursive: true, force: true });
}
