import fp from 'fastify-plugin';
import type { Config } from '../config/config.js';
import { type Storage, openStorage } from '../storage/database.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The database every feature's repositories are built on. */
    storage: Storage;
  }
}

export interface StoragePluginOptions {
  config: Config;
  /** An open storage to use (tests share one); otherwise opened from config and closed with the app. */
  storage?: Storage;
  /** Apply pending migrations before serving (default true). */
  migrate?: boolean;
}

/**
 * Opens storage from config once the app (and so its logger) exists: an idle connection
 * failing during start-up migrations is logged, not a crash.
 */
export const storagePlugin = fp<StoragePluginOptions>(
  async (app, options) => {
    const storage =
      options.storage ?? openStorage(options.config, { onPoolError: (error) => app.log.warn({ err: error }, 'idle database connection failed') });
    if (options.storage === undefined) app.addHook('onClose', () => storage.close());
    app.decorate('storage', storage);
    if (options.migrate !== false) await storage.migrate();
  },
  { name: 'focus-storage' },
);
