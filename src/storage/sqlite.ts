import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import {
  type DatabaseConnection,
  Kysely,
  SqliteDialect,
  type SqliteDatabase,
  SqliteDriver,
  type SqliteStatement,
  CompiledQuery,
} from 'kysely';
import { type Dialect, likeExpression } from './dialect.js';
import {
  ForeignKeyViolationError,
  type StorageError,
  StorageUnavailableError,
  UniqueViolationError,
} from './storage.errors.js';
import type { Database } from './tables.js';

/** Every transaction here writes, so take the write lock up front: no upgrade deadlocks, no SQLITE_BUSY mid-transaction. */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly database: SqliteDatabase) {
    super({ database });
  }
  override createDriver() {
    return new ImmediateSqliteDriver({ database: this.database });
  }
}

/** Kysely prepares every query anew; better-sqlite3 statements are reusable, so keep them. */
function withStatementCache(db: BetterSqlite3.Database, size = 512): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => db.close(),
    prepare(sqlText: string): SqliteStatement {
      let stmt = cache.get(sqlText);
      if (stmt === undefined) {
        stmt = db.prepare(sqlText) as unknown as SqliteStatement;
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

export function openSqlite(url: string, busyTimeoutMs = 5_000): { db: Kysely<Database>; raw: BetterSqlite3.Database } {
  const path = sqlitePath(url);
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const raw = new BetterSqlite3(path);
  raw.pragma('journal_mode = WAL');
  // WAL + NORMAL survives a killed process; only an OS crash may lose the last commits.
  raw.pragma('synchronous = NORMAL');
  raw.pragma('foreign_keys = ON');
  raw.pragma(`busy_timeout = ${busyTimeoutMs}`);
  const db = new Kysely<Database>({ dialect: new ImmediateSqliteDialect(withStatementCache(raw)) });
  return { db, raw };
}

function translateSqliteError(error: unknown): StorageError | undefined {
  if (!(error instanceof BetterSqlite3.SqliteError)) return undefined;
  const code = error.code;
  if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
    return new UniqueViolationError(error.message, undefined);
  }
  if (code === 'SQLITE_CONSTRAINT_FOREIGNKEY') return new ForeignKeyViolationError(error.message);
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') || code === 'SQLITE_FULL' ||
      code.startsWith('SQLITE_IOERR') || code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_READONLY')) {
    return new StorageUnavailableError(`database unavailable (${code})`);
  }
  return undefined;
}

export const sqliteDialect: Dialect = {
  name: 'sqlite',
  idType: 'integer',
  idColumn: (col) => col.primaryKey().autoIncrement(),
  // SQLite's LIKE already ignores ASCII case.
  containsInsensitive: (column, needle) => likeExpression('like', column, needle),
  translateError: translateSqliteError,
  maxParameters: 32_766,
};
