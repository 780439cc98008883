import type { FastifyInstance } from 'fastify';
import { buildApp } from './app/app.js';
import { type Config, describeDatabase } from './config/config.js';
import { createAuthService } from './features/auth/auth.service.js';
import { warmZones } from './features/calendar/calendar.service.js';
import { startJobs } from './server.jobs.js';

/** One line, so that it reads well inside a JSON log entry too; nothing in it looks like a credential to the log scrubber. */
const FIRST_RUN_HINT =
  'No users yet. For people, the web app at {base}/: `npx focus users add <handle> --org <org_id> --admin` creates the org, ' +
  '`npx focus invite <org_id>` prints a one-time link where a person chooses a handle and password, and `npx focus users add <that handle> --org <org_id> --admin` ' +
  'makes them its admin, who invites everyone else from Settings. For scripts: `npx focus tokens issue <handle> --name <label>`, and send it in the ' +
  '`Authorization` header after the scheme `Bearer` (e.g. GET {base}/api/v1/me).';

/** Starts serving; SIGTERM/SIGINT close the listener, let in-flight requests finish, then close the database. */
export async function startServer(config: Config): Promise<FastifyInstance> {
  // The app opens storage itself, once its logger exists, and closes it when it closes.
  const app = await buildApp({ config });
  const { storage } = app;
  startJobs(app, { allowPrivate: config.webhookAllowPrivate, retryScale: config.webhookRetryScale, dnsServers: config.webhookDnsServers });
  // Every time zone's VTIMEZONE, computed in a worker thread while the server starts: a feed's first fetch finds them cached.
  const warming = performance.now();
  void warmZones().then((zones) => app.log.info({ zones, ms: Math.round(performance.now() - warming) }, 'time-zone definitions computed'));

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal, drainTimeoutMs: config.drainTimeoutMs }, 'shutting down: draining in-flight requests');
    // Whatever clients do (a body trickling in, a response never read), the process ends.
    setTimeout(() => {
      app.log.error({ drainTimeoutMs: config.drainTimeoutMs }, 'drain deadline passed: exiting with requests still in flight');
      process.exit(1);
    }, config.drainTimeoutMs).unref();
    app.close().then(
      () => {
        app.log.info('shut down cleanly');
        process.exit(0);
      },
      (error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));

  let base: string;
  try {
    base = await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    // Nothing is served (a port taken, say): stop the jobs and close the database, or the process
    // would go on running jobs unseen; a signal meanwhile must not end it with 0 (shutdown).
    closing = true;
    // The listen error says what went wrong: a failure to close is logged, not put in its place.
    await app.close().catch((closeError: unknown) => app.log.error({ err: closeError }, 'closing after a failed start failed'));
    throw error;
  }
  app.log.info(
    { database: describeDatabase(config.databaseUrl), engine: storage.engine, address: base, rateLimit: config.rateLimit },
    'focus serving %s on %s',
    describeDatabase(config.databaseUrl),
    base,
  );
  for (const warning of await storage.settingsWarnings()) app.log.warn({ hint: 'database-settings' }, warning);
  if ((await createAuthService(storage).countUsers()) === 0) app.log.warn({ hint: 'first-run' }, FIRST_RUN_HINT.replaceAll('{base}', base));
  return app;
}
