import type { FastifyInstance } from 'fastify';
import { afterEach } from 'vitest';
import { buildApp } from '../../src/app/app.js';
import { createAuthService } from '../../src/features/auth/auth.service.js';
import type { WebhookSettings } from '../../src/features/webhooks/webhooks.service.js';
import { startJobs } from '../../src/server.jobs.js';
import { type Storage, openStorage } from '../../src/storage/database.js';
import type { DialectName } from '../../src/storage/dialect.js';
import { Client, type TestDatabase, type UserClient, freshDatabaseToMigrate, testConfig } from './harness.js';
import { Receiver } from './webhook-receiver.js';

export interface JobsApp {
  /** The app serving now: without jobs until `start`. */
  readonly app: FastifyInstance;
  storage: Storage;
  database: TestDatabase;
  user(handle: string, orgIds?: number[]): Promise<UserClient>;
  /** Starts the app with its background jobs, as a serving instance runs them. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * An app with the background jobs of a serving instance (fan-out, clock, dispatcher…),
 * spoken to through inject(). Until `start` an app without jobs serves (as if every
 * instance that runs them were down); `start` replaces it with one that runs them.
 */
export async function createJobsApp(dialect: DialectName, given: Partial<WebhookSettings> = {}): Promise<JobsApp> {
  // Sent on the event loop: a dispatch thread loads its module graph anew through tsx, 2–5 s per
  // app on two cores. The thread itself is exercised by the slow suites' server processes.
  const settings: WebhookSettings = { allowPrivate: true, retryScale: 0.001, inline: true, ...given };
  const database = await freshDatabaseToMigrate(dialect);
  const storage = openStorage({ databaseUrl: database.url });
  await storage.migrate();
  const env = { WEBHOOK_ALLOW_PRIVATE: settings.allowPrivate ? '1' : '0', WEBHOOK_RETRY_SCALE: String(settings.retryScale) };
  const config = testConfig(database.url, env);
  let app = await buildApp({ config, storage, logger: false });
  // Clients follow whichever app serves.
  const current = { inject: (options: unknown) => app.inject(options as never) } as unknown as FastifyInstance;
  const admin = createAuthService(storage);
  return {
    get app() {
      return app;
    },
    storage,
    database,
    async user(handle, orgIds = [1]) {
      await admin.addUser(handle, orgIds);
      const issued = await admin.issueToken(handle);
      return Object.assign(new Client(current, issued.token), { tokenId: issued.id });
    },
    async start() {
      await app.close();
      app = await buildApp({ config, storage, logger: false });
      // Registered before the app is ready, as the server does.
      startJobs(app, settings);
      await app.ready();
    },
    async close() {
      await app.close();
      await storage.close();
      await database.drop();
    },
  };
}

/** The scene of the time-triggered webhook tests: a jobs app and a receiver per test, both closed after it. */
export function useJobsScene(dialect: DialectName): () => Promise<{ t: JobsApp; receiver: Receiver }> {
  let scene: { t: JobsApp; receiver: Receiver } | undefined;
  afterEach(async () => {
    await scene?.t.close();
    await scene?.receiver.stop();
    scene = undefined;
  });
  return async () => {
    scene = { t: await createJobsApp(dialect), receiver: await new Receiver().start() };
    return scene;
  };
}
