import { type Expression, type SelectQueryBuilder, type SqlBool, sql } from 'kysely';
import { foldForSearch } from '../../storage/columns.js';
import type { SessionType } from '../../domain/vocabulary.js';
import type { Db, Storage } from '../../storage/database.js';
import type { Database } from '../../storage/tables.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';

/** What a listing asks for, besides the page: the filters of the interface document. */
export interface SessionFilters {
  orgIds: readonly number[];
  channel?: 'public' | 'private';
  type?: SessionType;
  completed?: 0 | 1;
  source?: 'user' | 'organization';
  keyword?: string;
  /**
   * Restricts to these session ids (sessionIdsNamed's answer, sessions.name-search.ts). Listings no longer
   * set it: that lookup reads every tenant's names (issue 34, M3); they test the keyword
   * on the visible rows they read.
   */
  named?: readonly number[];
}

/** Who reads, as far as a statement needs to know: the rest of the user would split prepared statements by user (storage/prepared.ts). */
export type Reader = Pick<AuthenticatedUser, 'id' | 'orgIds'>;
export const readerOf = (user: Reader): Reader => ({ id: user.id, orgIds: user.orgIds });

/** The filters as a statement takes them: the keyword folded as names are (Storage.foldedContains). */
export type StatementFilters = Omit<SessionFilters, 'keyword'> & { folded?: string };
export function statementFilters(f: SessionFilters): StatementFilters {
  const { keyword, ...rest } = f;
  return keyword === undefined ? rest : { ...rest, folded: foldForSearch(keyword) };
}

/**
 * The parts of a Reader (at `user`) and of StatementFilters (at `filters`) that reach a
 * listing's statements only as parameters (storage/prepared.ts): no value, a keyword
 * included, decides which statement a listing runs.
 */
export const READER_PARAMS = ['user.id', 'user.orgIds'] as const;
export const FILTER_PARAMS = ['filters.orgIds', 'filters.type', 'filters.named', 'filters.folded'] as const;

/**
 * The visible part of a listing comes from two kinds of stream, each read in listing order
 * from an index of its own: an org's public sessions, and the reader's personal ones (created,
 * collaborated on, joined: session_access). A session another member keeps private is in
 * neither, so it costs the reader nothing. Which streams a listing needs follows from its filters.
 */
export interface Streams {
  /** An org's public sessions (one stream per org). */
  public: boolean;
  /** The sessions the reader is tied to. */
  personal: boolean;
  /**
   * The `is_public` the personal stream needs read, if only one: the channel asked for, or
   * 0 when the public streams are read too (they hold the reader's public sessions).
   */
  personalPublic: 0 | 1 | undefined;
}

export function streamsFor(f: Pick<SessionFilters, 'channel' | 'source'>): Streams {
  const publicStream = f.source !== 'user' && f.channel !== 'private';
  // With the public stream read, the reader's public sessions are in it already.
  const personal = !(publicStream && f.channel === 'public');
  const personalPublic = f.channel === 'public' ? 1 : f.channel === 'private' || publicStream ? 0 : undefined;
  return { public: publicStream, personal, personalPublic };
}

/** The sessions the user is tied to (created, collaborates on, joined any occurrence of), as a subquery of ids. */
export function tiedIds(db: Db, user: Pick<Reader, 'id'>) {
  return db.selectFrom('session_access').select('session_access.session_id').where('session_access.user_id', '=', user.id);
}

export type Condition = Expression<SqlBool>;

/**
 * What a listing's keys statement reads beside a key: the row's version, the counted occurrence's
 * participants (null: not counted there) and, for a dated key of a series, its occurrence's
 * override `fields` as stored (null: none; absent: not read).
 */
export type KeySeen = {
  version: number;
  joined: number | null;
  override?: string | null;
  /** A series' first three indexed dates from `from` (nextThreeList; null: none or not a series), read when the listing asked. */
  next?: { from: string; list: string | null };
};

/**
 * The streams of a page as one statement: the union orders them (`order`, result columns) and
 * stops at `limit`, so each part is walked in that order from its own index and read only as
 * far as the page needs; where the database needs it (Storage.cutsUnionParts), each part also
 * keeps that order and limit itself. SQLite sorted such parts again (issue 36: the undated keys
 * statement took about a quarter less time bare). The streams never share a row (streamsFor: the
 * personal one leaves out public sessions whenever the public ones are read; a dated page's own
 * private occurrences and its by-session stream split by creator), so the union keeps all
 * (both databases merge the ordered parts lazily instead of hashing them).
 */
export function streamsAsOne<O>(storage: Storage, db: Db, parts: readonly SelectQueryBuilder<Database, keyof Database, O>[], order: readonly (keyof O & string)[], limit: number) {
  const cut = <DB, TB extends keyof DB, R>(query: SelectQueryBuilder<DB, TB, R>) => order.reduce((q, column) => q.orderBy(sql.ref(column)), query).limit(limit);
  // A bare part's subquery is flattened into the union (SQLite): it is the part itself.
  const [first, ...rest] = parts.map((part) => db.selectFrom((storage.cutsUnionParts ? cut(part) : part).as('stream')).selectAll());
  if (first === undefined) return undefined;
  return cut(rest.reduce((all, part) => all.unionAll(part), first));
}
