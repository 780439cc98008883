import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { type Dialect, likeExpression } from './dialect.js';
import {
  ForeignKeyViolationError,
  type StorageError,
  StorageUnavailableError,
  TransactionConflictError,
  UniqueViolationError,
} from './storage.errors.js';
import type { Database } from './tables.js';

export interface PostgresOptions {
  poolSize: number;
  connectTimeoutMs: number;
  statementTimeoutMs: number;
  onPoolError: (error: Error) => void;
}

const INT8_OID = 20;
// Counts and bigint ids arrive as strings by default; every id here is a safe integer.
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

export function openPostgres(url: string, options: PostgresOptions): { db: Kysely<Database>; pool: pg.Pool } {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize,
    connectionTimeoutMillis: options.connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    statement_timeout: options.statementTimeoutMs,
    // A broken TCP connection is noticed instead of hanging until the OS gives up.
    keepAlive: true,
    application_name: 'focus',
    types,
  });
  // Without a listener, an idle client dying (server restart) would crash the process.
  pool.on('error', options.onPoolError);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, pool };
}

const UNAVAILABLE_SQLSTATE = /^(08|53|57P0|57014|58)/;
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH']);

function translatePostgresError(error: unknown): StorageError | undefined {
  if (!(error instanceof Error)) return undefined;
  const { code, constraint } = error as Error & { code?: string; constraint?: string };
  if (code === '23505') return new UniqueViolationError(error.message, constraint);
  if (code === '23503') return new ForeignKeyViolationError(error.message);
  if (code === '40001' || code === '40P01') return new TransactionConflictError(error.message);
  if ((code !== undefined && (UNAVAILABLE_SQLSTATE.test(code) || NETWORK_CODES.has(code))) ||
      /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connection is closed|Cannot use a pool after calling end/i.test(error.message)) {
    return new StorageUnavailableError('database unavailable');
  }
  return undefined;
}

export const postgresDialect: Dialect = {
  name: 'postgres',
  idType: 'bigint',
  idColumn: (col) => col.primaryKey().generatedByDefaultAsIdentity(),
  containsInsensitive: (column, needle) => likeExpression('ilike', column, needle),
  translateError: translatePostgresError,
  maxParameters: 65_535,
};
