import { Kysely, PostgresDialect, type SqlBool, sql } from 'kysely';
import pg from 'pg';
import { type Dialect, indexable, likeLiteral, plainName } from './dialect.js';
import {
  ForeignKeyViolationError,
  type StorageError,
  StorageUnavailableError,
  TransactionConflictError,
  UniqueViolationError,
} from './storage.errors.js';
import type { Database } from './tables.js';
import { namingPool } from './postgres.named.js';
import { TranslatingDriver } from './translating-driver.js';

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
    oid === INT8_OID ? (value: string) => Number(value) : (pg.types.getTypeParser(oid, format) as (value: string) => unknown)) as typeof pg.types.getTypeParser,
};

export function openPostgres(url: string, options: PostgresOptions): { db: Kysely<Database>; pool: pg.Pool } {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize,
    connectionTimeoutMillis: options.connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    statement_timeout: options.statementTimeoutMs,
    // A broken TCP connection is noticed in seconds instead of the OS default of two hours.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    // A transaction left open by a stuck request must not hold row locks indefinitely.
    idle_in_transaction_session_timeout: Math.max(options.statementTimeoutMs * 3, 30_000),
    application_name: 'focus',
    types,
  });
  // Without a listener, an idle client dying (server restart) would crash the process.
  pool.on('error', options.onPoolError);
  // pg-pool only listens while a client is idle. A checked-out client whose server
  // went away (restart, pg_terminate_backend) emits 'error' after its query failed,
  // and an unheard 'error' event kills the process. The failed query already carries
  // the error to its caller, and pg-pool drops the broken client when it comes back.
  pool.on('connect', (client) => {
    client.on('error', options.onPoolError);
  });
  const db = new Kysely<Database>({ dialect: new TranslatingPostgresDialect({ pool: namingPool(pool) }) });
  return { db, pool };
}

/** PostgreSQL's driver, with its errors translated where the statements run. */
class TranslatingPostgresDialect extends PostgresDialect {
  override createDriver() {
    return new TranslatingDriver(super.createDriver(), translatePostgresError);
  }
}

const UNAVAILABLE_SQLSTATE = /^(08|53|57P0|57014|58)/;
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH']);

/**
 * What an operator needs to find the fault: the driver's words, which name the host and
 * port it could not reach (`connect ECONNREFUSED 127.0.0.1:5432`) and never the password.
 * Node's connection attempt to a name with several addresses fails with an empty message:
 * then the code and the address of each attempt.
 */
function unavailableDetail(error: Error, code: string | undefined): string {
  if (error.message !== '') return error.message;
  const attempts = error instanceof AggregateError ? (error.errors as unknown[]) : [error];
  const where = attempts.flatMap((e) => {
    const { address, port } = e as { address?: string; port?: number };
    return address === undefined ? [] : [port === undefined ? address : `${address}:${port}`];
  });
  return [code ?? 'no code', ...where].join(' ');
}

/** Exported for its test: driver errors that need a connection this machine cannot make. */
export function translatePostgresError(error: unknown): StorageError | undefined {
  if (!(error instanceof Error)) return undefined;
  const { code, constraint } = error as Error & { code?: string; constraint?: string };
  if (code === '23505') return new UniqueViolationError(error.message, code, error, constraint);
  if (code === '23503') return new ForeignKeyViolationError(error.message, code, error);
  if (code === '40001' || code === '40P01') return new TransactionConflictError(error.message, code, error);
  if ((code !== undefined && (UNAVAILABLE_SQLSTATE.test(code) || NETWORK_CODES.has(code))) ||
      /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connection is closed|Cannot use a pool after calling end/i.test(error.message)) {
    return new StorageUnavailableError(`database unavailable (${unavailableDetail(error, code)})`, code, error);
  }
  return undefined;
}

export const postgresDialect: Dialect = {
  name: 'postgres',
  idType: 'bigint',
  idColumn: (col) => col.primaryKey().generatedByDefaultAsIdentity(),
  statementsOnEventLoop: false,
  cutsUnionParts: true,
  locksRows: true,
  serialWrites: false,
  tryLock,
  async idsContaining(db, index, folded, limit) {
    if (!indexable(folded)) return undefined;
    // LIKE on the folded column, served by its pg_trgm index.
    const [table, column] = [plainName(index.table), plainName(index.column)];
    const { rows } = await sql<{ id: number }>`
      select id from ${sql.raw(table)} where ${sql.raw(column)} like ${likeLiteral(folded)} escape '\\' limit ${limit}`.execute(db);
    return rows.map((r) => r.id);
  },
  foldedContains: (column, folded) => sql<SqlBool>`strpos(${column}, ${folded}) > 0`,
  // One array parameter: the same statement text for every number of ids, too.
  commaList: (value) => sql<string | null>`string_agg(${value}, ',')`,
  idIn: (column, ids) => sql<SqlBool>`${column} in (select unnest(${[...ids]}::bigint[]) limit ${ids.length})`,
  // A subquery expression brings its own parentheses: `array(select …)`.
  inSubquery: (column, ids) => sql<SqlBool>`${column} = any(array${ids})`,
  maxParameters: 65_535,
  createSubstringIndex: createTrigramIndex,
  withMigrationLock: withPostgresMigrationLock,
  settingsWarnings: postgresSettingsWarnings,
  // autovacuum analyzes tables as they change.
  refreshStatistics: () => Promise.resolve(),
};

/** Checked at start-up: each of these trades committed data, the pool, or the speed of reads away. */
async function postgresSettingsWarnings(db: Kysely<Database>, poolSize: number): Promise<string[]> {
  const { rows } = await sql<{ name: string; setting: string }>`
    select name, setting from pg_settings
    where name in ('fsync', 'full_page_writes', 'synchronous_commit', 'max_connections', 'superuser_reserved_connections', 'autovacuum')
  `.execute(db);
  const setting = new Map(rows.map((r) => [r.name, r.setting]));
  const warnings: string[] = [];
  if (setting.get('fsync') === 'off') warnings.push('PostgreSQL runs with fsync=off: a server or OS crash can corrupt the database');
  if (setting.get('full_page_writes') === 'off') {
    warnings.push('PostgreSQL runs with full_page_writes=off: a crash mid-write can leave torn pages that recovery cannot repair');
  }
  if (setting.get('synchronous_commit') === 'off') {
    warnings.push('PostgreSQL runs with synchronous_commit=off: a server crash can lose the last acknowledged writes');
  }
  if (setting.get('autovacuum') === 'off') {
    // Every session update leaves a dead row (the occurrence indexer updates each one at
    // least once), and statistics are never refreshed: listings slow down as tables age.
    warnings.push('PostgreSQL runs with autovacuum=off: dead rows and stale statistics slow listings down over time; turn it on or VACUUM ANALYZE regularly');
  }
  const usable = Number(setting.get('max_connections') ?? 0) - Number(setting.get('superuser_reserved_connections') ?? 0);
  // A serving process also holds one connection that LISTENs for signals (signals.ts).
  if (usable > 0 && poolSize + 1 > usable) {
    warnings.push(
      `DB_POOL_SIZE=${poolSize} and the one listening connection exceed the ${usable} connections PostgreSQL allows (max_connections): requests will wait and fail`,
    );
  }
  return warnings;
}

/**
 * Kysely's own bookkeeping is not safe for instances starting together on a fresh
 * database: it probes for its tables in every schema it can see (a table in another
 * schema counts as present) and creates them before taking its lock. So: one connection,
 * a session advisory lock per schema, the migration tables pinned to that schema, and no
 * statement timeout, since building an index on a large table takes longer than a request may.
 */
async function withPostgresMigrationLock<T>(
  db: Kysely<Database>,
  fn: (db: Kysely<Database>, schema: string | undefined) => Promise<T>,
): Promise<T> {
  return db.connection().execute(async (conn) => {
    const found = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(conn);
    const schema = found.rows[0]?.schema;
    // No schema of search_path exists: the tables would land nowhere sensible.
    if (schema === undefined || schema === null) throw new Error('no current schema on PostgreSQL: check search_path in DATABASE_URL');
    const key = `focus.migrate.${schema}`;
    await sql`set statement_timeout = 0`.execute(conn);
    await sql`select pg_advisory_lock(hashtext(${key}))`.execute(conn);
    try {
      return await fn(conn, schema);
    } finally {
      // A dead connection releases both by itself; these only matter for a live one.
      await sql`select pg_advisory_unlock(hashtext(${key}))`.execute(conn);
      await sql`reset statement_timeout`.execute(conn);
    }
  });
}

/**
 * A GIN trigram index serves `ILIKE '%needle%'` (with ESCAPE) for needles of three or
 * more characters. pg_trgm is a trusted extension: a role with CREATE on the database
 * may install it. It goes into `public`, never the migrating schema, so that dropping
 * one schema cannot take the operator class (and every index on it) from the others.
 */
async function createTrigramIndex(db: Kysely<unknown>, index: string, table: string, column: string): Promise<void> {
  await sql`create extension if not exists pg_trgm with schema public`.execute(db);
  const found = await sql<{ schema: string }>`
    select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm'
  `.execute(db);
  const schema = found.rows[0]?.schema ?? 'public';
  await sql`create index if not exists ${sql.id(index)} on ${sql.table(table)} using gin (${sql.ref(column)} ${sql.id(schema)}.gin_trgm_ops)`.execute(db);
}

/**
 * A transaction-scoped advisory lock per key and schema: two schemas of one database (the
 * tests', or two deployments') never wait for each other.
 */
async function tryLock(trx: Kysely<Database>, key: string): Promise<boolean> {
  const locked = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(hashtext(${key} || '.' || current_schema())) as locked`.execute(trx);
  return locked.rows[0]?.locked === true;
}
