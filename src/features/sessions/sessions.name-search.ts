import { foldForSearch } from '../../storage/columns.js';
import type { Storage } from '../../storage/database.js';
import type { SubstringIndex } from '../../storage/dialect.js';

/** `sessions.search_name` (folded names) and its substring index: pg_trgm, or the FTS5 trigram table migration 0004 keeps on SQLite. */
const SESSION_NAMES: SubstringIndex = { table: 'sessions', column: 'search_name', sqliteTrigramTable: 'sessions_search' };

/**
 * Keyword search on session names, compared with Unicode case folding and literally (no
 * wildcards): the ids of the matching sessions through the substring index, or undefined
 * when the needle is too short for the index or more than `max` sessions match (then test
 * `Storage.foldedContains` on the rows a listing reads anyway: a common word fills a page fast).
 */
export async function sessionIdsNamed(storage: Storage, needle: string, max: number): Promise<number[] | undefined> {
  const ids = await storage.idsContaining(SESSION_NAMES, foldForSearch(needle), max + 1);
  return ids === undefined || ids.length > max ? undefined : ids;
}
