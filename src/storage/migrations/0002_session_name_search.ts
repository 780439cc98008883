import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/** Keyword search (`?keyword=`) is a case-insensitive substring match on sessions.name. */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await dialect.createSubstringIndex(db, 'sessions_name_search_idx', 'sessions', 'name');
}
