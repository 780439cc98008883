import type { ColumnDefinitionBuilder, Expression, Kysely, SqlBool } from 'kysely';
import type { Database } from './tables.js';

export type DialectName = 'sqlite' | 'postgres';

/**
 * Everything that differs between SQLite and PostgreSQL, chosen once when the database is
 * opened (openStorage). Only storage sees it: the Storage it builds offers the neutral
 * operations (containsInsensitive, maxParameters, …), and each driver translates its own
 * errors where statements run.
 */
export interface Dialect {
  readonly name: DialectName;
  /** Column type and modifiers for a surrogate key that is never reused. */
  readonly idType: 'integer' | 'bigint';
  readonly idColumn: (col: ColumnDefinitionBuilder) => ColumnDefinitionBuilder;
  /** Statements run synchronously on the event loop (SQLite), not on a server. */
  readonly statementsOnEventLoop: boolean;
  /**
   * Ids of the sessions whose folded name contains the folded needle, literally (no
   * wildcards), found through the engine's substring index (FTS5 trigram, pg_trgm);
   * undefined when the needle is shorter than the index can look up, or more than `max`
   * sessions match.
   */
  sessionIdsNamed(db: Kysely<Database>, folded: string, max: number): Promise<number[] | undefined>;
  /** A folded text column contains the folded needle, literally: for rows a query reads anyway. */
  foldedContains(column: Expression<string>, folded: string): Expression<SqlBool>;
  /** Largest number of bound parameters one statement may carry. */
  readonly maxParameters: number;
  /** See Storage.idIn. */
  idIn(column: Expression<number>, ids: readonly number[]): Expression<SqlBool>;
  /** See Storage.sequenceChanges. */
  sequenceChanges(db: Kysely<Database>): Promise<number>;
  /** Makes the change log give each row its position as it is written, where writers take turns (SQLite). Migrations only. */
  positionChangesOnInsert(db: Kysely<unknown>): Promise<void>;
  /** Whether a select can lock the rows it reads (`for update`); SQLite's write transactions exclude each other instead. */
  readonly locksRows: boolean;
  /**
   * Makes containsInsensitive on table.column fast at scale where the engine can
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

/** Escapes LIKE wildcards so that user input matches literally (with ESCAPE '\'). */
export function likeLiteral(needle: string): string {
  return `%${needle.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** A substring index needs three characters to look anything up; shorter needles are checked row by row. */
export const MIN_INDEXED_NEEDLE = 3;
export const indexable = (folded: string) => [...folded].length >= MIN_INDEXED_NEEDLE;
