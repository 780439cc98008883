import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Config } from './config/config.js';
import { fastifyTrustProxy } from './config/trust-proxy.js';
import { meRoutes } from './features/auth/auth.routes.js';
import { idempotencyPlugin } from './features/idempotency/idempotency.plugin.js';
import { sessionsRoutes } from './features/sessions/sessions.routes.js';
import { SessionSchema } from './features/sessions/sessions.schema.js';
import { systemRoutes } from './features/system/system.routes.js';
import { tasksRoutes } from './features/tasks/tasks.routes.js';
import { TaskSchema } from './features/tasks/tasks.schema.js';
import { addAuthHook } from './http/auth.hook.js';
import { installBodilessRoutes } from './http/bodiless.js';
import { clientErrorHandler } from './http/client-errors.js';
import { frameworkErrors, installErrorHandling } from './http/error-handler.js';
import { etagPlugin } from './http/etag.js';
import { installJsonDepthLimit } from './http/json-depth.js';
import { redactingLoggerOptions, requestIdFrom } from './http/log-redaction.js';
import { MethodIndex } from './http/method-index.js';
import { installNulGuard } from './http/nul-guard.js';
import { addConcurrencyGate } from './http/concurrency.js';
import { ProblemSchema, problemResponses } from './http/problem.schema.js';
import { installRateLimit } from './http/rate-limit.js';
import { installBodyDeadline, serverDeadlines } from './http/timeouts.js';
import { validatorCompiler } from './http/validation.js';
import { type Storage, openStorage } from './storage/database.js';
import { migrateToLatest } from './storage/migrator.js';

/**
 * API requests served at once on SQLite, whose statements run on the event loop (see
 * addConcurrencyGate). Bench, 50 connections: 8 cost GET /tasks ~10 % (fewer requests per
 * turn of the loop); 16 keeps the worst stall under 50 ms at full speed. PostgreSQL runs
 * statements elsewhere, and in-flight requests keep its pool busy.
 */
const SQLITE_CONCURRENCY = 16;

export const API_PREFIX = '/api/v1';
export const BODY_LIMIT = 1024 * 1024;

export interface AppOptions {
  config: Config;
  /** An open storage to use (tests share one); otherwise opened from config and closed with the app. */
  storage?: Storage;
  /** Pino options or false; defaults to JSON logs at config.logLevel. */
  logger?: FastifyServerOptions['logger'];
  /** Apply pending migrations before serving (default true). */
  migrate?: boolean;
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config } = options;
  const app = Fastify({
    logger: options.logger ?? {
      level: config.logLevel,
      // No secret reaches a log line, even at trace level.
      ...redactingLoggerOptions,
      // Like every `focus` command: stdout is for results, logs go to stderr.
      stream: process.stderr,
    },
    bodyLimit: BODY_LIMIT,
    trustProxy: fastifyTrustProxy(config.trustProxy),
    ...serverDeadlines(config),
    clientErrorHandler,
    // A client's x-request-id is kept only when it can be neither a secret nor a forged log line.
    requestIdHeader: false,
    genReqId: (req) => requestIdFrom(req.headers['x-request-id']),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    frameworkErrors,
  }).withTypeProvider<TypeBoxTypeProvider>();
  // Bodies are JSON only: Fastify's built-in text/plain parser would turn a text body into a 422 instead of a 415.
  app.removeContentTypeParser('text/plain');

  const storage =
    options.storage ??
    openStorage(config.databaseUrl, {
      poolSize: config.poolSize,
      connectTimeoutMs: config.connectTimeoutMs,
      statementTimeoutMs: config.statementTimeoutMs,
      onPoolError: (error) => app.log.warn({ err: error }, 'idle database connection failed'),
    });
  if (options.storage === undefined) app.addHook('onClose', () => storage.close());
  if (options.migrate !== false) await migrateToLatest(storage);

  app.setValidatorCompiler(validatorCompiler);
  for (const schema of [ProblemSchema, TaskSchema, SessionSchema]) app.addSchema(schema);

  const methods = new MethodIndex();
  app.addHook('onRoute', (route) => methods.add(route.url, route.method));
  installErrorHandling(app, storage.dialect, (path) => methods.allowed(path));
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  await installRateLimit(app, { max: config.rateLimit, redisUrl: config.redisUrl });
  installBodyDeadline(app, config.bodyTimeoutMs);
  installBodilessRoutes(app);
  installJsonDepthLimit(app);
  installNulGuard(app);
  await app.register(etagPlugin);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Focus API',
        version: '1.0.0',
        description: 'Timed focus sessions and the tasks people commit to in them. Errors are RFC 9457 problem+json.',
      },
      servers: [{ url: '/' }],
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An `fst_` token from `npx focus tokens issue`.' } } },
      security: [{ bearer: [] }],
      tags: [
        { name: 'sessions', description: 'Focus sessions, recurrence and participation' },
        { name: 'tasks', description: 'Tasks and bulk import' },
        { name: 'auth', description: 'The authenticated user' },
        { name: 'operations', description: 'Health, readiness and this document' },
      ],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true } });

  await app.register(systemRoutes, { storage });
  app.get(
    `${API_PREFIX}/openapi.json`,
    {
      schema: {
        tags: ['operations'],
        summary: 'This OpenAPI 3.1 document',
        security: [],
        response: {
          200: {
            description: 'The OpenAPI 3.1 document of this API.',
            type: 'object',
            additionalProperties: true,
          },
          ...problemResponses(429),
        },
      },
    },
    // Spread: an object literal type, which the response schema's index signature accepts.
    () => ({ ...app.swagger() }),
  );

  await app.register(
    async (api) => {
      if (storage.dialect.statementsOnEventLoop) addConcurrencyGate(api, SQLITE_CONCURRENCY);
      addAuthHook(api, storage);
      await api.register(idempotencyPlugin, { storage });
      await api.register(meRoutes);
      await api.register(sessionsRoutes, { storage });
      await api.register(tasksRoutes, { storage });
    },
    { prefix: API_PREFIX },
  );

  return app;
}
