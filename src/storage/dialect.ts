import type { AliasableExpression, ColumnDefinitionBuilder, Expression, Kysely, SqlBool } from 'kysely';
import type { Database } from './tables.js';

export type DialectName = 'sqlite' | 'postgres';

/**
 * Everything that differs between SQLite and PostgreSQL, chosen once when the database is
 * opened (openStorage). Only storage sees it: the Storage it builds offers the neutral
 * operations (idsContaining, foldedContains, maxParameters, …), and each driver translates its own
 * errors where statements run.
 */
export interface Dialect {
  readonly name: DialectName;
  /** Column type and modifiers for a surrogate key that is never reused. */
  readonly idType: 'integer' | 'bigint';
  readonly idColumn: (col: ColumnDefinitionBuilder) => ColumnDefinitionBuilder;
  /** Statements run synchronously on the event loop (SQLite), not on a server. */
  readonly statementsOnEventLoop: boolean;
  /** See Storage.idsContaining. */
  idsContaining(db: Kysely<Database>, index: SubstringIndex, folded: string, limit: number): Promise<number[] | undefined>;
  /** A folded text column contains the folded needle, literally: for rows a query reads anyway. */
  foldedContains(column: Expression<string>, folded: string): Expression<SqlBool>;
  /** Largest number of bound parameters one statement may carry. */
  readonly maxParameters: number;
  /** See Storage.commaList. */
  commaList(value: Expression<string>): AliasableExpression<string | null>;
  /** See Storage.idIn. */
  idIn(column: Expression<number>, ids: readonly number[]): Expression<SqlBool>;
  /** See Storage.inSubquery. */
  inSubquery(column: Expression<number>, ids: Expression<number>): Expression<SqlBool>;
  /** Takes the lock named `key` for the rest of the transaction if no other transaction holds it (see Storage.transactionIfFree). */
  tryLock(trx: Kysely<Database>, key: string): Promise<boolean>;
  /**
   * The parts of an ordered, limited UNION ALL are best each ordered and cut at the limit
   * themselves, as subqueries (PostgreSQL: its planner then walks each part's index to the
   * limit; bare parts it read whole). SQLite sorts such a subquery again before merging, and
   * walks bare parts in the union's order, lazily, to the limit.
   */
  readonly cutsUnionParts: boolean;
  /** Whether a select can lock the rows it reads (`for update`); SQLite's write transactions exclude each other instead. */
  readonly locksRows: boolean;
  /** Write transactions run one at a time (SQLite): ids they take are in commit order. */
  readonly serialWrites: boolean;
  /**
   * Makes a substring lookup on table.column fast at scale where the engine can
   * (a trigram index on PostgreSQL); a no-op where a scan is the only plan. Migrations only.
   */
  createSubstringIndex(db: Kysely<unknown>, index: string, table: string, column: string): Promise<void>;
  /**
   * Keeps the planner's table statistics current where the engine does not do it itself
   * (SQLite: `pragma optimize`, bounded by analysis_limit; PostgreSQL's autovacuum analyzes).
   */
  refreshStatistics(db: Kysely<Database>): Promise<void>;
  /** Server or file settings that put committed data or availability at risk, as log-ready sentences. */
  settingsWarnings(db: Kysely<Database>, poolSize: number): Promise<string[]>;
  /**
   * Runs fn (the migrator) so that processes migrating the same database take turns,
   * handing it the connection to use and the schema the migration tables live in.
   */
  withMigrationLock<T>(db: Kysely<Database>, fn: (db: Kysely<Database>, schema: string | undefined) => Promise<T>): Promise<T>;
}

/**
 * A folded text column with a substring index, as a feature names it to Storage.idsContaining:
 * the table (its key is `id`), the column, and on SQLite the FTS5 trigram table over that
 * column (its rowid is the key) that the migration creating the index made.
 */
export interface SubstringIndex {
  readonly table: string;
  readonly column: string;
  readonly sqliteTrigramTable: string;
}

/** The names of a SubstringIndex go into statements as they are: the features' constants, never input. */
export function plainName(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain SQL name: ${name}`);
  return name;
}

/** Escapes LIKE wildcards so that user input matches literally (with ESCAPE '\'). */
export function likeLiteral(needle: string): string {
  return `%${needle.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** A substring index needs three characters to look anything up; shorter needles are checked row by row. */
export const MIN_INDEXED_NEEDLE = 3;
export const indexable = (folded: string) => [...folded].length >= MIN_INDEXED_NEEDLE;
