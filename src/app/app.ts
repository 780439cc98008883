import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Server } from 'node:http';
import Fastify, { type FastifyHttpOptions, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Config } from '../config/config.js';
import { fastifyTrustProxy } from '../config/trust-proxy.js';
import { type SsoSettings, accountsRoutes, createAccounts, signinRoutes, ssoRoutes } from '../features/accounts/accounts.public.js';
import { authPlugin } from '../features/auth/auth.plugin.js';
import { createOAuthService, deviceRoutes, oauthRoutes } from '../features/oauth/oauth.public.js';
import { blockerRoutes } from '../features/blocker/blocker.routes.js';
import { changesRoutes } from '../features/changes/changes.routes.js';
import { createChangesService } from '../features/changes/changes.service.js';
import { createEventHub } from '../features/events/events.hub.js';
import { eventsRoutes } from '../features/events/events.routes.js';
import { idempotencyPlugin } from '../features/idempotency/idempotency.plugin.js';
import { meRoutes } from '../features/auth/auth.routes.js';
import { createAuthService } from '../features/auth/auth.service.js';
import { calendarFeedsRoutes, icalRoutes } from '../features/calendar/calendar.routes.js';
import { createCalendarService } from '../features/calendar/calendar.service.js';
import { sessionsApi, sessionsRoutes } from '../features/sessions/sessions.api.js';
import { nowRoutes } from '../features/now/now.routes.js';
import { createNowService } from '../features/now/now.service.js';
import { ProbeQuietLogController } from '../features/system/system.logging.js';
import { createStatsReader } from '../features/stats/stats.reader.js';
import { statsRoutes } from '../features/stats/stats.routes.js';
import { systemRoutes } from '../features/system/system.routes.js';
import { tasksRoutes } from '../features/tasks/tasks.routes.js';
import { createTasksService } from '../features/tasks/tasks.service.js';
import { webhooksRoutes } from '../features/webhooks/webhooks.routes.js';
import { createWebhooksService } from '../features/webhooks/webhooks.service.js';
import type { Storage } from '../storage/database.js';
import { API_PREFIX, BODY_LIMIT } from '../toolkit/api.js';
import { serializerCompiler } from '../toolkit/serialization.js';
import { validatorCompiler } from '../toolkit/validation.js';
import { bodilessPlugin } from './bodiless.plugin.js';
import { clientErrorHandler, protocolErrorsPlugin, protocolServerOptions } from './client-errors.js';
import { concurrencyPlugin } from './concurrency.plugin.js';
import { drainPlugin } from './drain.plugin.js';
import { errorsPlugin, frameworkErrors } from './errors.plugin.js';
import { etagPlugin } from './etag.plugin.js';
import { jsonBodyPlugin } from './json-body.plugin.js';
import { redactingLoggerOptions } from './log-redaction.js';
import { openapiPlugin } from './openapi.plugin.js';
import { problemsRoutes } from './problems.routes.js';
import { rateLimitPlugin } from './rate-limit.plugin.js';
import { genReqId, requestIdPlugin } from './request-id.plugin.js';
import { storagePlugin } from './storage.plugin.js';
import { strictQueryPlugin } from './strict-query.plugin.js';
import { bodyDeadlinePlugin, serverDeadlines } from './timeouts.plugin.js';
import { loadWebApp, webPageNotFound, webappPlugin } from './webapp.plugin.js';

/**
 * API requests served at once where statements run on the event loop (SQLite; see the
 * concurrency plugin and docs/performance.md for how the number was chosen).
 */
const EVENT_LOOP_CONCURRENCY = 16;
/** `.ics` feeds built at once on such engines: each reads up to 500 sessions and writes them as text. */
const ICAL_CONCURRENCY = 4;

export interface AppOptions {
  config: Config;
  /** An open storage to use (tests share one); otherwise opened from config and closed with the app. */
  storage?: Storage;
  /** Pino options or false; defaults to JSON logs at config.logLevel. */
  logger?: FastifyServerOptions['logger'];
  /** Apply pending migrations before serving (default true). */
  migrate?: boolean;
}

function serverOptions(config: Config, logger: AppOptions['logger']): FastifyHttpOptions<Server> {
  const deadlines = serverDeadlines(config);
  return {
    logger: logger ?? {
      level: config.logLevel,
      // No secret reaches a log line, even at trace level.
      ...redactingLoggerOptions,
      // Like every `focus` command: stdout is for results, logs go to stderr.
      stream: process.stderr,
    },
    bodyLimit: BODY_LIMIT,
    trustProxy: fastifyTrustProxy(config.trustProxy),
    requestTimeout: deadlines.requestTimeout,
    http: { ...deadlines.http, ...protocolServerOptions },
    clientErrorHandler,
    requestIdHeader: false,
    genReqId,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    logController: new ProbeQuietLogController(),
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    frameworkErrors,
  };
}

/** Single sign-on's settings, when OIDC_ISSUER and its client are configured (loadConfig wants all three or none). */
function ssoSettings(config: Config): SsoSettings | undefined {
  const { oidcIssuer: issuer, oidcClientId: clientId, oidcClientSecret: clientSecret } = config;
  return issuer === null || clientId === null || clientSecret === null ? undefined : { issuer, clientId, clientSecret };
}

/** The service: app-wide plugins first (each declares what it needs), then the routes. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config } = options;
  const app = Fastify(serverOptions(config, options.logger)).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.decorate('publicUrl', config.publicUrl);

  await app.register(storagePlugin, { config, storage: options.storage, migrate: options.migrate });
  const { storage } = app;
  const auth = createAuthService(storage);
  const accounts = createAccounts(storage, auth, ssoSettings(config));
  await app.register(drainPlugin);
  // The web app's build, read once: its pages and the not-found page a browser gets.
  const web = loadWebApp();
  await app.register(errorsPlugin, { pageNotFound: webPageNotFound(web) });
  await app.register(requestIdPlugin);
  await app.register(protocolErrorsPlugin);
  await app.register(bodyDeadlinePlugin, { bodyTimeoutMs: config.bodyTimeoutMs });
  await app.register(bodilessPlugin);
  await app.register(jsonBodyPlugin);
  await app.register(authPlugin, { auth, ...accounts.authOptions });
  await app.register(rateLimitPlugin, { max: config.rateLimit, redisUrl: config.redisUrl });
  await app.register(etagPlugin);
  await app.register(openapiPlugin);

  const sessions = sessionsApi(storage);
  const tasks = createTasksService(storage);
  const changes = createChangesService(storage, { sessions, tasks });
  const hub = createEventHub({
    storage,
    changes,
    auth,
    log: app.log,
    settings: { pollMs: config.eventsPollMs, heartbeatMs: config.eventsHeartbeatMs, maxStreams: config.eventsMaxStreams, perToken: config.eventsStreamsPerToken },
  });
  // Before the listener closes: it waits for open connections, and a stream never ends by itself.
  app.addHook('preClose', (done) => {
    hub.close();
    done();
  });

  await app.register(systemRoutes, { storage });
  await app.register(problemsRoutes);
  await app.register(webappPlugin, { web });
  await app.register(signinRoutes, { signin: accounts.signin, auth });
  await app.register(ssoRoutes, { sso: accounts.sso, signin: accounts.signin });
  const oauth = createOAuthService(storage, auth);
  await app.register(oauthRoutes, { oauth });
  const calendar = createCalendarService(storage, sessions, { publicUrl: config.publicUrl });
  // Calendar feeds outside the API prefix: no bearer token; a gate of their own, so that polling calendar apps never queue API requests.
  await app.register(async (feeds) => {
    if (storage.statementsOnEventLoop) await feeds.register(concurrencyPlugin, { max: ICAL_CONCURRENCY });
    await feeds.register(icalRoutes, { calendar });
  });
  await app.register(
    async (api) => {
      if (storage.statementsOnEventLoop) await api.register(concurrencyPlugin, { max: EVENT_LOOP_CONCURRENCY });
      await api.register(strictQueryPlugin);
      await api.register(idempotencyPlugin, { storage });
      await api.register(meRoutes, { auth });
      await api.register(sessionsRoutes, { sessions });
      await api.register(tasksRoutes, { tasks });
      await api.register(changesRoutes, { changes });
      await api.register(calendarFeedsRoutes, { calendar });
      await api.register(nowRoutes, { now: createNowService(sessions) });
      await api.register(blockerRoutes);
      await api.register(statsRoutes, { stats: createStatsReader(storage, { memberIds: (orgId) => auth.memberIds(orgId) }) });
      await api.register(accountsRoutes, { orgs: accounts.orgs, tokens: accounts.tokens, signin: accounts.signin });
      await api.register(deviceRoutes, { oauth });
      await api.register(webhooksRoutes, {
        webhooks: createWebhooksService(storage, { allowPrivate: config.webhookAllowPrivate, retryScale: config.webhookRetryScale, dnsServers: config.webhookDnsServers }),
      });
    },
    { prefix: API_PREFIX },
  );
  // Outside the concurrency gate (see eventsRoutes): a stream would hold a slot for hours.
  await app.register(async (live) => live.register(eventsRoutes, { hub, perToken: config.eventsStreamsPerToken }), { prefix: API_PREFIX });
  return app;
}
