/** Says once, loudly, which external services this run covers and which it skips. */
export default function setup(): void {
  const pg = process.env.TEST_DATABASE_URL;
  const redis = process.env.TEST_REDIS_URL;
  const lines = [
    pg ? `PostgreSQL: every storage and HTTP suite also runs against ${pg.replace(/\/\/[^@]*@/, '//***@')}` : 'PostgreSQL: SKIPPED (set TEST_DATABASE_URL=postgres://… to run every suite on PostgreSQL too)',
    redis ? `Redis: shared rate-limit suites run against ${redis}` : 'Redis: SKIPPED (set TEST_REDIS_URL=redis://… to run the shared rate-limit suites)',
  ];
  process.stderr.write(`\n${lines.map((l) => `  ${l}`).join('\n')}\n\n`);
  // In CI a skipped PostgreSQL run is a broken pipeline, not a quiet success.
  if (process.env.CI === 'true' && !pg) throw new Error('CI=true but TEST_DATABASE_URL is not set: PostgreSQL suites would be skipped');
}
