import { type AliasableExpression, type Expression, type Kysely, type KyselyPlugin, type SqlBool, type Transaction, sql } from 'kysely';
import type { Dialect, DialectName, SubstringIndex } from './dialect.js';
import { runMigrations } from './migrator.js';
import { openPostgres, postgresDialect } from './postgres.js';
import { type Signals, postgresSignals, sqliteSignals } from './signals.js';
import { type OpenedSqlite, openSqlite, sqliteDialect } from './sqlite/sqlite.js';
import { TransactionConflictError } from './storage.errors.js';
import type { Database, Db } from './tables.js';

export type { Db } from './tables.js';
export type Trx = Transaction<Database>;

/** What opening storage needs; the service's Config satisfies it. */
export interface StorageSettings {
  databaseUrl: string;
  poolSize?: number;
  connectTimeoutMs?: number;
  statementTimeoutMs?: number;
  /**
   * SQLite: the longest a write transaction waits for the write-ahead log to have room before
   * it goes ahead regardless (default 2 s, sqlite.checkpointer.ts). Tests that assert the
   * log's bound lengthen it, so that a disk slowed by other work cannot decide their outcome.
   */
  roomWaitMs?: number;
  /** SQLite: the machinery of storage/sqlite/ (SqliteOptions.machinery); on unless false. */
  sqliteMachinery?: boolean;
}

export interface StorageHooks {
  /** An idle pooled connection failed (PostgreSQL); without a listener it would crash the process. */
  onPoolError?: (error: Error) => void;
  /** Kysely plugins every statement goes through (tests and the bench capture statements this way). */
  plugins?: readonly KyselyPlugin[];
}

/**
 * The database, with what differs between engines decided inside. Features build their
 * repositories on it and never ask which engine it is; driver errors leave every query
 * as the errors of storage.errors.ts.
 */
export interface Storage {
  readonly db: Db;
  /** What it was opened with: another thread opens the same database with them (webhooks.dispatch-thread.ts). */
  readonly settings: StorageSettings;
  /** For log lines and the app's wiring only. */
  readonly engine: DialectName;
  /** Statements run synchronously on the event loop (SQLite), not on a server. */
  readonly statementsOnEventLoop: boolean;
  /** Largest number of bound parameters one statement may carry. */
  readonly maxParameters: number;
  /** Write transactions run one at a time (SQLite): ids they take are in commit order. */
  readonly serialWrites: boolean;
  /** See Dialect.cutsUnionParts. */
  readonly cutsUnionParts: boolean;
  /**
   * Up to `limit` keys of the rows whose folded column contains `folded` (a needle folded
   * the same way, foldForSearch), literally (no wildcards), through the column's substring
   * index; undefined when the needle is too short for the index (then test `foldedContains`
   * on the rows a query reads anyway).
   */
  idsContaining(index: SubstringIndex, folded: string, limit: number): Promise<number[] | undefined>;
  /** A folded text column contains `folded`, a needle folded the same way (foldForSearch): for rows a query reads anyway. */
  foldedContains(column: Expression<string>, folded: string): Expression<SqlBool>;
  /**
   * `column in ids` (at least one), as the way the statement finds its rows whatever else
   * it tests. PostgreSQL otherwise ANDed a page's 50 ids with the bitmap of every row the
   * index of another condition matched (every session of the reader's orgs, 0.7 ms of a
   * 2 ms statement): there the list is a limited subquery, which the planner cannot merge.
   * SQLite's planner takes the key by itself (docs/performance.md).
   */
  idIn(column: Expression<number>, ids: readonly number[]): Expression<SqlBool>;
  /**
   * `column in (ids)`, `ids` a subquery of few rows, as the list the statement probes its
   * index with. PostgreSQL otherwise may turn it into a join led by another index (a dated
   * page scanned every occurrence of the range, 442 buffers for 4 rows, when its statistics
   * came out so): there the subquery's rows become one array first.
   */
  inSubquery(column: Expression<number>, ids: Expression<number>): Expression<SqlBool>;
  /** The aggregate of `value` over a group's rows, comma-separated in no set order (null for none): for values that hold no comma. */
  commaList(value: Expression<string>): AliasableExpression<string | null>;
  /**
   * The query with the rows it reads locked against concurrent writers until the
   * transaction ends (PostgreSQL `for update`). On SQLite it is the query itself: a write
   * transaction there excludes every other writer from its start.
   */
  forUpdate<Q extends { forUpdate(): Q }>(query: Q): Q;
  /**
   * The query locking the rows it reads and passing over rows another transaction has
   * locked (PostgreSQL `for update skip locked`): how several instances share a queue
   * without taking the same item. On SQLite, the query itself (one writer at a time).
   */
  forUpdateSkipLocked<Q extends { forUpdate(): Q; skipLocked(): Q }>(query: Q): Q;
  /**
   * Runs fn in one transaction holding the lock named `lock` (per database schema) until it
   * ends, or returns undefined at once when another transaction holds it: work that any
   * instance may do, one at a time, and that whoever does not get the lock leaves to
   * whoever has it. No retry: the holder's next turn does the work.
   */
  transactionIfFree<T>(lock: string, fn: (trx: Trx) => Promise<T>): Promise<T | undefined>;
  /**
   * Runs fn in one transaction, retrying a lost serialization race or deadlock. On SQLite it
   * first waits (at most 2 s a turn) while the write-ahead log is long and not copied yet
   * (roomyTransaction).
   */
  transaction<T>(fn: (trx: Trx) => Promise<T>): Promise<T>;
  /**
   * An opaque value that differs whenever committed data may have changed since it was
   * last read, by this process or any other; undefined where that cannot be told cheaply
   * (PostgreSQL), and then nothing may be cached. Read it before the data it guards.
   */
  dataVersion(): string | undefined;
  /** Notices between the processes on this database, and what may be cached in their light (see signals.ts). */
  readonly signals: Signals;
  /**
   * Applies every pending migration, or those up to the one named `upTo` (the bench builds
   * an old schema that way); safe from many processes at once. Returns the names applied.
   */
  migrate(upTo?: string): Promise<string[]>;
  /** Keeps the planner's statistics current where the engine does not. */
  refreshStatistics(): Promise<void>;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  /** Settings that risk committed data or availability; for a start-up log line each. */
  settingsWarnings(): Promise<string[]>;
  close(): Promise<void>;
}

const MAX_ATTEMPTS = 3;
/** How often a SQLite write that found room gives its turn up because others filled the log first. */
const MAX_ROOM_TURNS = 3;
const GIVEN_UP = Symbol('turn given up');

/**
 * A SQLite write transaction that keeps the write-ahead log within its room. It waits for
 * room before the connection is taken, so reads go on meanwhile; writers that found room
 * together then take the write lock one by one, so each asks again once it holds it, and
 * gives its turn up (an empty transaction) while the others have filled the log. Without
 * that, 16 daily-series writes took the log from 8,192 to 28,675 pages, near the backstop
 * that checkpoints on the event loop (docs/performance.md, "Writes that outran the room").
 */
async function roomyTransaction<T>(sqlite: OpenedSqlite, db: Kysely<Database>, fn: (trx: Trx) => Promise<T>): Promise<T> {
  for (let turn = 1; ; turn++) {
    const found = await sqlite.writeRoom();
    const judged = found && turn < MAX_ROOM_TURNS;
    const outcome = await db.transaction().execute<T | typeof GIVEN_UP>((trx) => (judged && sqlite.crowded() ? Promise.resolve(GIVEN_UP) : fn(trx)));
    if (outcome !== GIVEN_UP) return outcome;
  }
}
export const isPostgresUrl = (url: string) => /^postgres(ql)?:\/\//.test(url);

/** The one way to open the database, for the app, the server and the CLI alike. */
export function openStorage(settings: StorageSettings, hooks: StorageHooks = {}): Storage {
  const url = settings.databaseUrl;
  const dialect: Dialect = isPostgresUrl(url) ? postgresDialect : sqliteDialect;
  const poolSize = settings.poolSize ?? 10;
  const sqlite = dialect === sqliteDialect ? openSqlite(url, { roomWaitMs: settings.roomWaitMs, machinery: settings.sqliteMachinery }) : undefined;
  const opened =
    sqlite?.db ??
    openPostgres(url, {
      poolSize,
      connectTimeoutMs: settings.connectTimeoutMs ?? 5_000,
      statementTimeoutMs: settings.statementTimeoutMs ?? 10_000,
      onPoolError: hooks.onPoolError ?? (() => undefined),
    }).db;
  const db = (hooks.plugins ?? []).reduce((d, plugin) => d.withPlugin(plugin), opened);
  const signals =
    sqlite !== undefined
      ? sqliteSignals(sqlite.dataVersion)
      : postgresSignals(url, { connectTimeoutMs: settings.connectTimeoutMs ?? 5_000, onError: hooks.onPoolError ?? (() => undefined) });

  return {
    db,
    settings,
    engine: dialect.name,
    statementsOnEventLoop: dialect.statementsOnEventLoop,
    maxParameters: dialect.maxParameters,
    serialWrites: dialect.serialWrites,
    cutsUnionParts: dialect.cutsUnionParts,
    idsContaining: (index, folded, limit) => dialect.idsContaining(db, index, folded, limit),
    foldedContains: (column, folded) => dialect.foldedContains(column, folded),
    idIn: (column, ids) => dialect.idIn(column, ids),
    inSubquery: (column, ids) => dialect.inSubquery(column, ids),
    commaList: (value) => dialect.commaList(value),
    forUpdate: (query) => (dialect.locksRows ? query.forUpdate() : query),
    forUpdateSkipLocked: (query) => (dialect.locksRows ? query.forUpdate().skipLocked() : query),
    transactionIfFree: (lock, fn) => db.transaction().execute(async (trx) => ((await dialect.tryLock(trx, lock)) ? fn(trx) : undefined)),
    async transaction(fn) {
      for (let attempt = 1; ; attempt++) {
        try {
          return sqlite === undefined ? await db.transaction().execute(fn) : await roomyTransaction(sqlite, db, fn);
        } catch (error) {
          if (!(error instanceof TransactionConflictError) || attempt >= MAX_ATTEMPTS) throw error;
        }
      }
    },
    dataVersion: () => sqlite?.dataVersion(),
    signals,
    migrate: (upTo) => runMigrations(db, dialect, upTo),
    refreshStatistics: () => dialect.refreshStatistics(db),
    async ping() {
      await sql`select 1`.execute(db);
    },
    // Advisory only: failing to read the settings must not stop a server that is up.
    settingsWarnings: () =>
      dialect.settingsWarnings(db, poolSize).catch((error: unknown) => [
        `could not check the database settings: ${error instanceof Error ? error.message : 'unknown error'}`,
      ]),
    async close() {
      await signals.close();
      await sqlite?.stop();
      await db.destroy();
    },
  };
}
