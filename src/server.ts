import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Config } from './config/config.js';
import { countUsers } from './features/auth/auth.repository.js';
import { openStorage } from './storage/database.js';

/** The database a URL names, safe to log: a PostgreSQL password never reaches a log line. */
export function describeDatabase(url: string): string {
  if (!/^postgres(ql)?:\/\//.test(url)) return url;
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    // `options` can carry settings, not secrets, but keep the line short.
    parsed.search = '';
    return parsed.toString();
  } catch {
    return 'postgres://(unparseable URL)';
  }
}

const STATISTICS_INTERVAL_MS = 3_600_000;

/** One line, so that it reads well inside a JSON log entry too. */
const FIRST_RUN_HINT =
  'No users yet. Create one and a token: `npx focus users add <handle> --org <org_id>`, then ' +
  '`npx focus tokens issue <handle> --name <label>`, and call the API with `Authorization: Bearer <token>` (e.g. GET {base}/api/v1/me).';

/** Starts serving; SIGTERM/SIGINT close the listener, let in-flight requests finish, then close the database. */
export async function startServer(config: Config): Promise<FastifyInstance> {
  const storage = openStorage(config.databaseUrl, {
    poolSize: config.poolSize,
    connectTimeoutMs: config.connectTimeoutMs,
    statementTimeoutMs: config.statementTimeoutMs,
    onPoolError: (error) => app.log.warn({ err: error }, 'idle database connection failed'),
  });
  const app = await buildApp({ config, storage });
  // Statistics after the migrations (a new index has none), then hourly as tables grow.
  const refreshStatistics = () =>
    storage.refreshStatistics().catch((error: unknown) => app.log.warn({ err: error }, 'could not refresh table statistics'));
  await refreshStatistics();
  const statistics = setInterval(() => void refreshStatistics(), STATISTICS_INTERVAL_MS).unref();
  app.addHook('onClose', () => {
    clearInterval(statistics);
    return storage.close();
  });

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

  const base = await app.listen({ port: config.port, host: config.host });
  app.log.info(
    { database: describeDatabase(config.databaseUrl), dialect: storage.dialect.name, address: base, rateLimit: config.rateLimit },
    'focus serving %s on %s',
    describeDatabase(config.databaseUrl),
    base,
  );
  for (const warning of await storage.settingsWarnings()) app.log.warn({ hint: 'database-settings' }, warning);
  if ((await countUsers(storage.db)) === 0) app.log.warn({ hint: 'first-run' }, FIRST_RUN_HINT.replace('{base}', base));
  return app;
}
