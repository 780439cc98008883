import { type Kysely, type Transaction, sql } from 'kysely';
import type { Dialect } from './dialect.js';
import { openPostgres } from './postgres.js';
import { openSqlite, sqliteDialect } from './sqlite.js';
import { postgresDialect } from './postgres.js';
import { TransactionConflictError } from './storage.errors.js';
import type { Database } from './tables.js';

export interface StorageOptions {
  poolSize?: number;
  connectTimeoutMs?: number;
  statementTimeoutMs?: number;
  onPoolError?: (error: Error) => void;
}

export interface Storage {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
  /** Runs fn in one transaction, retrying a lost serialization race or deadlock. */
  transaction<T>(fn: (trx: Transaction<Database>) => Promise<T>): Promise<T>;
  /**
   * An opaque value that differs whenever committed data may have changed since it was
   * last read, by this process or any other; undefined where that cannot be told cheaply
   * (PostgreSQL), and then nothing may be cached. Read it before the data it guards.
   */
  dataVersion(): string | undefined;
  /** See Dialect.refreshStatistics. */
  refreshStatistics(): Promise<void>;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  /** Settings that risk committed data or availability; for a start-up log line each. */
  settingsWarnings(): Promise<string[]>;
  close(): Promise<void>;
}

export type Db = Kysely<Database>;

const MAX_ATTEMPTS = 3;

export function openStorage(url: string, options: StorageOptions = {}): Storage {
  const isPostgres = /^postgres(ql)?:\/\//.test(url);
  const dialect = isPostgres ? postgresDialect : sqliteDialect;
  const poolSize = options.poolSize ?? 10;
  const sqlite = isPostgres ? undefined : openSqlite(url);
  const db =
    sqlite?.db ??
    openPostgres(url, {
      poolSize,
      connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
      statementTimeoutMs: options.statementTimeoutMs ?? 10_000,
      onPoolError: options.onPoolError ?? (() => undefined),
    }).db;

  return {
    db,
    dialect,
    async transaction(fn) {
      for (let attempt = 1; ; attempt++) {
        try {
          return await db.transaction().execute(fn);
        } catch (error) {
          const translated = dialect.translateError(error);
          if (!(translated instanceof TransactionConflictError) || attempt >= MAX_ATTEMPTS) throw error;
        }
      }
    },
    dataVersion: () => sqlite?.dataVersion(),
    refreshStatistics: () => dialect.refreshStatistics(db),
    async ping() {
      await sql`select 1`.execute(db);
    },
    // Advisory only: failing to read the settings must not stop a server that is up.
    settingsWarnings: () =>
      dialect.settingsWarnings(db, poolSize).catch((error: unknown) => [
        `could not check the database settings: ${error instanceof Error ? error.message : 'unknown error'}`,
      ]),
    close: () => db.destroy(),
  };
}
