import BetterSqlite3 from 'better-sqlite3';
import {
  type DatabaseConnection,
  Kysely,
  SqliteDialect,
  type SqliteDatabase,
  SqliteDriver,
  type SqliteStatement,
  CompiledQuery,
  type SqlBool,
  sql,
} from 'kysely';
import { type Dialect, indexable, plainName } from './dialect.js';
import { BACKSTOP_CHECKPOINT_PAGES, startCheckpointer } from './sqlite.checkpointer.js';
import {
  ForeignKeyViolationError,
  type StorageError,
  StorageUnavailableError,
  UniqueViolationError,
} from './storage.errors.js';
import type { Database } from './tables.js';
import { TranslatingDriver } from './translating-driver.js';

const isBusy = (error: unknown) => error instanceof BetterSqlite3.SqliteError && error.code.startsWith('SQLITE_BUSY');

class ImmediateSqliteDriver extends SqliteDriver {
  /** SQLite has one connection here, used by one caller at a time (Kysely's mutex): one flag suffices. */
  private inTransaction = false;

  constructor(
    config: ConstructorParameters<typeof SqliteDriver>[0],
    private readonly lockWaitMs: number,
  ) {
    super(config);
  }

  /** Every transaction here writes, so take the write lock up front: no upgrade deadlocks, no SQLITE_BUSY mid-transaction. */
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
    this.inTransaction = true;
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await super.commitTransaction(connection);
    this.inTransaction = false;
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    this.inTransaction = false;
    await super.rollbackTransaction(connection);
  }

  /**
   * better-sqlite3 runs statements synchronously and Kysely resolves at once, so a request's
   * whole chain of statements ran without a pause, and 50 listings arriving together held the
   * event loop for all of theirs (docs/performance.md). Letting pending I/O and timers run once
   * the connection is ours, before each statement or transaction, bounds a turn of the loop by one
   * of them. The pause comes after the lock: a release hands the connection to the next waiter
   * in the same turn, so pausing before it let ten waiting write transactions run back to back.
   */
  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await super.acquireConnection();
    await new Promise<void>((resolve) => setImmediate(resolve));
    return { executeQuery: (query) => this.waitingForLock(() => connection.executeQuery(query)), streamQuery: (query, size) => connection.streamQuery(query, size) };
  }

  /**
   * SQLite's busy_timeout waits for another process's write lock synchronously: 8 s held
   * elsewhere froze the whole server, health checks included. busy_timeout is 0 instead,
   * and a statement that finds the database locked (outside a transaction, so it did
   * nothing; `begin immediate` included) is tried again after a pause that lets everything
   * else run, until lockWaitMs have passed; then SQLITE_BUSY goes up as a 503.
   */
  private async waitingForLock<T>(run: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.lockWaitMs;
    for (let pause = 2; ; pause = Math.min(pause * 2, 50)) {
      try {
        return await run();
      } catch (error) {
        if (this.inTransaction || !isBusy(error) || Date.now() >= deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.min(pause * (0.5 + Math.random()), Math.max(1, deadline - Date.now()))));
      }
    }
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  constructor(
    private readonly database: SqliteDatabase,
    private readonly lockWaitMs: number,
  ) {
    super({ database });
  }
  override createDriver() {
    return new TranslatingDriver(new ImmediateSqliteDriver({ database: this.database }, this.lockWaitMs), translateSqliteError);
  }
}

/**
 * A reader whose rows come back as arrays and become objects here: better-sqlite3 builds
 * each row object key by key through its C++ API, which costs clearly more, and so did a
 * loop assigning `row[name]` here (docs/performance.md, "Rows as objects"). A function
 * compiled once per statement builds each row as one object literal, which V8 makes in a
 * single step. Its source holds only the statement's column names, each quoted by
 * JSON.stringify: nothing a client sends reaches it.
 */
function arrayRowStatement(stmt: BetterSqlite3.Statement): SqliteStatement {
  const toObject = rowBuilder(stmt.columns().map((c) => c.name));
  stmt.raw(true);
  return {
    reader: true,
    all: (parameters) => (stmt.all(parameters) as unknown[][]).map(toObject),
    run: (parameters) => stmt.run(parameters),
    *iterate(parameters) {
      for (const values of stmt.iterate(parameters) as IterableIterator<unknown[]>) yield toObject(values);
    },
  };
}

/** Turns a row of values in column order into an object keyed by `names`. */
function rowBuilder(names: string[]): (values: unknown[]) => Record<string, unknown> {
  // In a literal, "__proto__" would set the prototype: such a result takes the slow path.
  if (names.includes('__proto__')) {
    return (values) => {
      const row: Record<string, unknown> = {};
      names.forEach((name, i) => Object.defineProperty(row, name, { value: values[i], enumerable: true, writable: true, configurable: true }));
      return row;
    };
  }
  // A result may repeat a name: the last value wins, as with better-sqlite3's own objects.
  const fields = names.map((name, i) => `${JSON.stringify(name)}: values[${i}]`).join(', ');
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- compiled from column names only (see arrayRowStatement)
  return new Function('values', `return {${fields}};`) as (values: unknown[]) => Record<string, unknown>;
}

/** Kysely prepares every query anew; better-sqlite3 statements are reusable, so keep them. */
function withStatementCache(db: BetterSqlite3.Database, size = 512): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => db.close(),
    prepare(sqlText: string): SqliteStatement {
      let stmt = cache.get(sqlText);
      if (stmt === undefined) {
        const prepared = db.prepare(sqlText);
        stmt = prepared.reader ? arrayRowStatement(prepared) : prepared;
        if (cache.size >= size) cache.delete(cache.keys().next().value as string);
        cache.set(sqlText, stmt);
      }
      return stmt;
    },
  };
}

export function sqlitePath(url: string): string {
  const path = url.slice('sqlite:'.length);
  return path === ':memory:' ? ':memory:' : path.replace(/^\/\/(?=\/)/, '');
}

export interface OpenedSqlite {
  db: Kysely<Database>;
  raw: BetterSqlite3.Database;
  /** See Storage.dataVersion. */
  dataVersion: () => string;
  /** Stops what runs beside the connection (the checkpointer); before closing it. */
  stop: () => Promise<void>;
  /** Resolves when a write transaction may begin without outrunning the checkpointer (Checkpointer.room): true when it found room. */
  writeRoom: () => Promise<boolean>;
  /** Whether a write beginning now would lengthen a log past the room (Checkpointer.crowded). */
  crowded: () => boolean;
}

/**
 * `lockWaitMs`: how long a statement waits for another process's write lock (see
 * waitingForLock); `roomWaitMs`: how long a write waits for room in the write-ahead log
 * (Checkpointer.room).
 */
export function openSqlite(url: string, { lockWaitMs = 5_000, roomWaitMs }: { lockWaitMs?: number; roomWaitMs?: number } = {}): OpenedSqlite {
  const path = sqlitePath(url);
  // Never creates directories: a mistyped path must fail, not start an empty database elsewhere.
  const raw = new BetterSqlite3(path);
  raw.pragma('journal_mode = WAL');
  // WAL + NORMAL survives a killed process; only an OS crash may lose the last commits.
  raw.pragma('synchronous = NORMAL');
  raw.pragma('foreign_keys = ON');
  // Never wait synchronously: ImmediateSqliteDriver waits for locks without blocking the event loop.
  raw.pragma('busy_timeout = 0');
  // The default 2 MB page cache re-reads pages through the OS on every listing; at 200k sessions a
  // keyword listing ran much faster with 64 MB (docs/performance.md). Memory is only used as pages are read.
  raw.pragma('cache_size = -65536');
  // Checkpoints run off the event loop (sqlite.checkpointer.ts); an in-memory database has no log.
  const checkpointer = raw.memory ? undefined : startCheckpointer(raw.name, roomWaitMs);
  if (checkpointer !== undefined) raw.pragma(`wal_autocheckpoint = ${BACKSTOP_CHECKPOINT_PAGES}`);
  const db = new Kysely<Database>({ dialect: new ImmediateSqliteDialect(withStatementCache(raw), lockWaitMs) });
  // data_version moves when another connection (another process) commits; total_changes when this one writes.
  const version = raw.prepare<[], string>("select (select data_version from pragma_data_version) || ':' || total_changes()").pluck();
  return {
    db,
    raw,
    dataVersion: () => version.get() as string,
    stop: async () => checkpointer?.stop(),
    writeRoom: async () => (await checkpointer?.room()) ?? false,
    crowded: () => checkpointer?.crowded() ?? false,
  };
}

function translateSqliteError(error: unknown): StorageError | undefined {
  if (!(error instanceof BetterSqlite3.SqliteError)) return undefined;
  const code = error.code;
  if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
    return new UniqueViolationError(error.message, code, error, undefined);
  }
  if (code === 'SQLITE_CONSTRAINT_FOREIGNKEY') return new ForeignKeyViolationError(error.message, code, error);
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') || code === 'SQLITE_FULL' ||
      code.startsWith('SQLITE_IOERR') || code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_READONLY')) {
    return new StorageUnavailableError(`database unavailable (${code})`, code, error);
  }
  return undefined;
}

/**
 * Kysely migrates SQLite without a transaction or a lock ("one connection"), but several
 * processes may share the file: two starting together would both run 0001. One write
 * transaction around the whole run makes them take turns; the loser waits (past
 * busy_timeout, for as long as a migration may take) and then finds nothing to do.
 */
async function withSqliteMigrationLock<T>(db: Kysely<Database>, fn: (db: Kysely<Database>, schema: undefined) => Promise<T>): Promise<T> {
  return db.connection().execute(async (conn) => {
    // better-sqlite3 waits for a lock synchronously, which would also freeze a holder in
    // this same process: poll without a busy timeout instead, sleeping between tries.
    const saved = await sql<{ timeout: number }>`pragma busy_timeout`.execute(conn);
    await sql`pragma busy_timeout = 0`.execute(conn);
    try {
      const deadline = Date.now() + 300_000;
      for (;;) {
        try {
          await sql`begin immediate`.execute(conn);
          break;
        } catch (error) {
          // Translated on its way out of the driver; the code says what it was.
          const { code } = error as { code?: unknown };
          const busy = typeof code === 'string' && code.startsWith('SQLITE_BUSY');
          if (!busy || Date.now() > deadline) throw error;
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
      }
    } finally {
      await sql.raw(`pragma busy_timeout = ${Number(saved.rows[0]?.timeout ?? 5_000)}`).execute(conn);
    }
    try {
      const result = await fn(conn, undefined);
      await sql`commit`.execute(conn);
      return result;
    } catch (error) {
      await sql`rollback`.execute(conn).catch(() => undefined);
      throw error;
    }
  });
}

export const sqliteDialect: Dialect = {
  name: 'sqlite',
  idType: 'integer',
  idColumn: (col) => col.primaryKey().autoIncrement(),
  statementsOnEventLoop: true,
  locksRows: false,
  serialWrites: true,
  // A write transaction excludes every other writer already: there is nothing else to wait for.
  tryLock: () => Promise.resolve(true),
  async idsContaining(db, index, folded, limit) {
    if (!indexable(folded)) return undefined;
    // GLOB on the case-sensitive trigram table (the text is folded already); its wildcards
    // `*`, `?` and `[` become one-character classes, so the needle matches literally.
    const pattern = `*${folded.replace(/[*?[]/g, (c) => `[${c}]`)}*`;
    const [table, column] = [plainName(index.sqliteTrigramTable), plainName(index.column)];
    const { rows } = await sql<{ id: number }>`select rowid as id from ${sql.raw(table)} where ${sql.raw(column)} glob ${pattern} limit ${limit}`.execute(db);
    return rows.map((r) => r.id);
  },
  foldedContains: (column, folded) => sql<SqlBool>`instr(${column}, ${folded}) > 0`,
  idIn: (column, ids) => sql<SqlBool>`${column} in (${sql.join([...ids])})`,
  maxParameters: 32_766,
  // A leading-wildcard LIKE can use no B-tree; at the sizes one SQLite file serves, the scan is cheap.
  createSubstringIndex: () => Promise.resolve(),
  withMigrationLock: withSqliteMigrationLock,
  async refreshStatistics(db) {
    // Without statistics SQLite guesses that an equality on any index's first column finds
    // ~10 rows, and a listing may then walk a whole org where a page of ids would do.
    // analysis_limit samples ~1,000 rows per index, so the cost stays bounded as tables grow.
    await sql`pragma analysis_limit = 1000`.execute(db);
    await sql`analyze`.execute(db);
  },

  async settingsWarnings(db) {
    const { rows } = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(db);
    return rows[0]?.journal_mode === 'memory'
      ? ['the database is in memory (sqlite::memory:): every record is lost when the process exits']
      : [];
  },
};
