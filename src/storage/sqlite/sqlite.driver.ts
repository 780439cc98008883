import BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery, type DatabaseConnection, SqliteDialect, type SqliteDatabase, SqliteDriver } from 'kysely';
import { ForeignKeyViolationError, type StorageError, StorageUnavailableError, UniqueViolationError } from '../storage.errors.js';
import { TranslatingDriver } from '../translating-driver.js';

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

/** SQLite through one connection: write transactions take the lock up front, statements wait for locks off the event loop. */
export class ImmediateSqliteDialect extends SqliteDialect {
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
