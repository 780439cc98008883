import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import type { Config } from './config/config.js';
import { countUsers } from './features/auth/auth.repository.js';
import { openStorage } from './storage/database.js';

const FIRST_RUN_HINT = `No users yet. Create one and a token, then call the API:
  npx focus users add alice --org 1
  npx focus tokens issue alice --name laptop
  curl -H "Authorization: Bearer <token>" http://HOST:PORT/api/v1/me`;

/** Starts serving; SIGTERM/SIGINT close the listener, let in-flight requests finish, then close the database. */
export async function startServer(config: Config): Promise<FastifyInstance> {
  const storage = openStorage(config.databaseUrl, {
    poolSize: config.poolSize,
    connectTimeoutMs: config.connectTimeoutMs,
    statementTimeoutMs: config.statementTimeoutMs,
    onPoolError: (error) => app.log.warn({ err: error }, 'idle database connection failed'),
  });
  const app = await buildApp({ config, storage });
  app.addHook('onClose', () => storage.close());

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: draining in-flight requests');
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));

  await app.listen({ port: config.port, host: config.host });
  if ((await countUsers(storage.db)) === 0) {
    const address = app.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : config.port;
    app.log.warn(FIRST_RUN_HINT.replace('HOST', config.host).replace('PORT', String(port)));
  }
  return app;
}
