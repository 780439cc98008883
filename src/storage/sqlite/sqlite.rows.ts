import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';
import { LRUCache } from 'lru-cache';

/** Prepared statements kept per connection: Kysely prepares every query anew, better-sqlite3 statements are reusable. */
const STATEMENTS = 512;

/**
 * The connection as Kysely's SQLite dialect sees it, with its statements kept. With
 * `compiledRows`, a reader's rows come back from better-sqlite3 as arrays and become objects
 * through a function compiled for its columns (rowBuilder); without, better-sqlite3 builds
 * each row object key by key through its C++ API, which costs more (docs/performance.md).
 */
export function withStatementCache(db: BetterSqlite3.Database, compiledRows: boolean): SqliteDatabase {
  const cache = new LRUCache<string, SqliteStatement>({ max: STATEMENTS });
  return {
    close: () => db.close(),
    prepare(sqlText: string): SqliteStatement {
      let stmt = cache.get(sqlText);
      if (stmt === undefined) {
        const prepared = db.prepare(sqlText);
        stmt = prepared.reader && compiledRows ? arrayRowStatement(prepared) : prepared;
        cache.set(sqlText, stmt);
      }
      return stmt;
    },
  };
}

/** A reader whose rows come back as arrays and become objects through rowBuilder. */
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

/**
 * Turns a row of values in column order into an object keyed by `names`: one object literal,
 * which V8 makes in a single step. Its source holds only the statement's column names, each
 * quoted by JSON.stringify: nothing a client sends reaches it.
 */
export function rowBuilder(names: string[]): (values: unknown[]) => Record<string, unknown> {
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
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- compiled from column names only (see above)
  return new Function('values', `return {${fields}};`) as (values: unknown[]) => Record<string, unknown>;
}
