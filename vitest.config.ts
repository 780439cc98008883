import { defineConfig } from 'vitest/config';

/**
 * Two projects. `fast` is the README's `npm test` (under two minutes on two cores).
 * `slow` holds what spawns server processes or browsers, restarts, kills, soaks or waits
 * on the wall clock; `.ci/run` runs it after `npm test`, and `npm run test:slow` runs it
 * by hand. Naming a file (`npx vitest run path`) finds it in either project.
 */
export const SLOW_SUITES = [
  'test/attacks/**/*.test.ts',
  // Expands feeds with python in a child process.
  'test/calendar/**/*.test.ts',
  'test/cli/**/*.test.ts',
  'test/client/**/*.test.ts',
  'test/docs/**/*.test.ts',
  'test/web/**/*.test.ts',
  'test/fault/**/*.test.ts',
  'test/fuzz/**/*.test.ts',
  'test/multi-instance/**/*.test.ts',
  'test/server/**/*.test.ts',
  'test/webhooks/**/*.test.ts',
  'test/security/**/*.test.ts',
  'test/limits/token-hygiene.test.ts',
  // Heartbeats and bursts of streams on the wall clock; a child process holding the write lock.
  'src/features/events/events.stream.test.ts',
  'src/storage/storage.sqlite-driver.test.ts',
  // Waits out the OpenID Connect client's timeout.
  'src/features/accounts/accounts.sso-timeout.test.ts',
  // Waits for the next minute of the real clock.
  'src/features/webhooks/webhooks.clock.test.ts',
];

const SETUP = 'test/helpers/global-setup.ts';
// The fast files share their workers' module graph (isolate: false): each builds its own app and
// database, and loading the whole app once per file cost about 60 % of `npm test`'s time.
const ALL = ['src/**/*.test.ts', 'test/**/*.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: more workers only add contention on the SQLite files.
    pool: 'forks',
    maxWorkers: 2,
    projects: [
      // The banner of what runs and what is skipped, once per project that runs.
      { extends: true, test: { name: 'fast', include: ALL, exclude: SLOW_SUITES, globalSetup: [SETUP], isolate: false } },
      { extends: true, test: { name: 'slow', include: SLOW_SUITES, globalSetup: [SETUP] } },
    ],
  },
});
