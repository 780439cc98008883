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
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export type Db = Kysely<Database>;

const MAX_ATTEMPTS = 3;

export function openStorage(url: string, options: StorageOptions = {}): Storage {
  const isPostgres = /^postgres(ql)?:\/\//.test(url);
  const dialect = isPostgres ? postgresDialect : sqliteDialect;
  const db = isPostgres
    ? openPostgres(url, {
        poolSize: options.poolSize ?? 10,
        connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
        statementTimeoutMs: options.statementTimeoutMs ?? 10_000,
        onPoolError: options.onPoolError ?? (() => undefined),
      }).db
    : openSqlite(url).db;

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
    async ping() {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}
