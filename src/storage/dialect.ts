import type { ColumnDefinitionBuilder, Expression, ExpressionBuilder, SqlBool } from 'kysely';
import { sql } from 'kysely';
import type { StorageError } from './storage.errors.js';

export type DialectName = 'sqlite' | 'postgres';

/**
 * Everything that differs between SQLite and PostgreSQL, chosen once when the
 * database is opened. Features never ask which dialect they run on.
 */
export interface Dialect {
  readonly name: DialectName;
  /** Column type and modifiers for a surrogate key that is never reused. */
  readonly idType: 'integer' | 'bigint';
  idColumn(col: ColumnDefinitionBuilder): ColumnDefinitionBuilder;
  /** Case-insensitive substring match where `%`, `_` and `\` in the needle are literal. */
  containsInsensitive(column: Expression<string>, needle: string): Expression<SqlBool>;
  /** The driver error as a storage error, or undefined when it is not one we know. */
  translateError(error: unknown): StorageError | undefined;
  /** Largest number of bound parameters one statement may carry. */
  readonly maxParameters: number;
}

/** Escapes LIKE wildcards so that user input matches literally (with ESCAPE '\'). */
export function likeLiteral(needle: string): string {
  return `%${needle.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export function likeExpression(
  operator: 'like' | 'ilike',
  column: Expression<string>,
  needle: string,
): Expression<SqlBool> {
  return sql<SqlBool>`${column} ${sql.raw(operator)} ${likeLiteral(needle)} escape '\\'`;
}

export type AnyExpressionBuilder = ExpressionBuilder<Record<string, Record<string, unknown>>, string>;
