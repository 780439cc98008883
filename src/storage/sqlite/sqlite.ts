import BetterSqlite3 from 'better-sqlite3';
import { Kysely, type SqlBool, sql } from 'kysely';
import { type Dialect, indexable, plainName } from '../dialect.js';
import type { Database } from '../tables.js';
import { BACKSTOP_CHECKPOINT_PAGES, startCheckpointer } from './sqlite.checkpointer.js';
import { ImmediateSqliteDialect } from './sqlite.driver.js';
import { withStatementCache } from './sqlite.rows.js';

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

export interface SqliteOptions {
  /** How long a statement waits for another process's write lock (ImmediateSqliteDriver.waitingForLock). */
  lockWaitMs?: number;
  /** How long a write waits for room in the write-ahead log (Checkpointer.room). */
  roomWaitMs?: number;
  /**
   * The machinery of this folder, on by default: checkpoints off the event loop with room in
   * the write-ahead log (sqlite.checkpointer.ts, sqlite.wal-index.ts) and rows built by a
   * compiled literal (sqlite.rows.ts). Off: SQLite's own checkpoints and better-sqlite3's
   * row objects, what `bench/machinery-ab.ts` compares against (docs/performance.md).
   */
  machinery?: boolean;
}

export function openSqlite(url: string, { lockWaitMs = 5_000, roomWaitMs, machinery = true }: SqliteOptions = {}): OpenedSqlite {
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
  const checkpointer = raw.memory || !machinery ? undefined : startCheckpointer(raw.name, roomWaitMs);
  if (checkpointer !== undefined) raw.pragma(`wal_autocheckpoint = ${BACKSTOP_CHECKPOINT_PAGES}`);
  const db = new Kysely<Database>({ dialect: new ImmediateSqliteDialect(withStatementCache(raw, machinery), lockWaitMs) });
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
  cutsUnionParts: false,
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
  commaList: (value) => sql<string | null>`group_concat(${value}, ',')`,
  idIn: (column, ids) => sql<SqlBool>`${column} in (${sql.join([...ids])})`,
  // A subquery expression brings its own parentheses.
  inSubquery: (column, ids) => sql<SqlBool>`${column} in ${ids}`,
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
