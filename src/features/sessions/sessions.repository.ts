import { LRUCache } from 'lru-cache';
import type { Audience } from '../../domain/vocabulary.js';
import type { Db, Storage } from '../../storage/database.js';
import type { SessionRow } from '../../storage/tables.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { type KeySeen, type SessionFilters, readerOf, statementFilters } from './sessions.listing-filters.js';
import type { RecurrenceRow } from './sessions.model.js';
import { RECURRENCE_COLUMNS } from './sessions.model.js';
import { type ByIdsQuery, type PageKey, type SessionWithCreator, baseQuery, listedQuery, sessionStatements, type UnindexedSide } from './sessions.statements.js';
import { sessionWrites } from './sessions.writes.js';
import { visibleTo } from './sessions.visibility.js';

export type { PageKey, SessionWithCreator };

/** Rows byIds keeps for later pages (shared by every reader, never changed): about 2 KB each. */
const KEPT_ROWS = 5_000;

/** A session row as byIds reads it: with its collaborators' handles, comma-separated in no set order (collaboratorsOf reads them). Shared: read-only. */
export type ListedRow = SessionWithCreator & { collaborator_list: string | null };

/** A listed row's collaborators' handles, in code-point order. */
export const collaboratorsOf = (row: ListedRow): string[] => (row.collaborator_list === null ? [] : row.collaborator_list.split(',').sort());

/** A session not (entirely) in the occurrence index, with what expanding it needs. */
export type UnindexedSession = RecurrenceRow & { indexed_through: string | null; indexed_from: string | null };

export type SessionsRepository = ReturnType<typeof createSessionsRepository>;

/** Session rows, their collaborators and removed occurrences. Built once per storage (sessions.api.ts). */
export function createSessionsRepository(storage: Storage) {
  return { ...sessionReads(storage), ...sessionWrites, ...relatedRows() };
}

/** Reads of session rows: listing keys, rows by id (visible, locked) with their collaborators. */
function sessionReads(storage: Storage) {
  const { keysQuery, unindexedQuery, byIdsQuery, versionsQuery } = sessionStatements(storage);
  const kept = new LRUCache<number, ListedRow>({ max: KEPT_ROWS });

  /**
   * The visible rows among `ids`, from the rows kept by an earlier read where their
   * row_version (drawn anew by the database on every change to a row or its collaborators,
   * migration 0027) still matches: a page reads two columns of a row it has read before
   * instead of all of them (issue 36), or none when its keys statement read the versions
   * (`seen`). The rows changed since are read whole, and kept.
   */
  async function keptRows(db: Db, ids: number[], listing: Required<ByIdsQuery>['listing'], seen?: ReadonlyMap<number, number>): Promise<Map<number, ListedRow>> {
    const unseen = seen === undefined ? ids : ids.filter((id) => !seen.has(id));
    const versions = [
      ...ids.flatMap((id) => (seen?.has(id) === true ? [{ id, row_version: seen.get(id) as number }] : [])),
      ...(unseen.length === 0 ? [] : await versionsQuery.execute(db, { ids: unseen, listing })),
    ];
    const changed = versions.filter((v) => kept.get(v.id)?.row_version !== v.row_version).map((v) => v.id);
    const read = changed.length === 0 ? [] : await byIdsQuery.execute(db, { ids: changed, listing });
    for (const r of read) kept.set(r.id, r);
    const readIds = new Set(read.map((r) => r.id));
    const out = new Map<number, ListedRow>();
    for (const v of versions) {
      const row = kept.get(v.id);
      // A row that changed between the two reads is shown as read last; one gone from sight meanwhile is not shown.
      if (row !== undefined && (readIds.has(v.id) || row.row_version === v.row_version)) out.set(v.id, row);
    }
    return out;
  }

  return {
    /**
     * The keys of one undated page after the cursor: the first `limit` of each visibility
     * stream (an org's public sessions, the reader's personal ones), merged; a session another
     * member keeps private is in none of them. Each comes with what the statement read beside it
     * (KeySeen: the row's version, a one-off's participant count, with `nextFrom` a series' next dates).
     */
    async keys(q: { user: AuthenticatedUser; filters: SessionFilters; after: PageKey | undefined; limit: number; nextFrom?: string }): Promise<(PageKey & { seen: KeySeen })[]> {
      const rows = await keysQuery.execute(storage.db, { ...q, user: readerOf(q.user), filters: statementFilters(q.filters) });
      const { nextFrom } = q;
      return rows.map((r) => ({
        startsAt: r.starts_at,
        id: r.id,
        seen: { version: r.row_version, joined: r.joined === null ? null : Number(r.joined), ...(nextFrom === undefined ? {} : { next: { from: nextFrom, list: r.next } }) },
      }));
    },

    /**
     * Visible sessions matching the filters that may occur in [from, to] but are not in the
     * occurrence index through `to` (side 'ahead'): stored before the index existed, or series
     * whose occurrences that far ahead are expanded per request; or not from `from` on
     * (side 'before'): series the index holds only from a later indexed_from. Completion is per occurrence,
     * so the caller applies that filter.
     */
    unindexedInRange(q: { user: AuthenticatedUser; filters: SessionFilters; from: string; to: string; side: UnindexedSide }): Promise<UnindexedSession[]> {
      return unindexedQuery.execute(storage.db, { ...q, user: readerOf(q.user), filters: statementFilters(q.filters) });
    },

    /**
     * The sessions among `ids` with their creator, by id. With `listing`, only those still
     * visible and matching its filters: a session may change between finding a page and
     * reading it, and one made private meanwhile is never shown. `seen`: the versions a
     * listing's keys statement read with the rows' visibility (only with `listing`).
     */
    async byIds(db: Db, q: { ids: readonly number[]; listing?: { user: AuthenticatedUser; filters: SessionFilters }; seen?: ReadonlyMap<number, number> }): Promise<Map<number, ListedRow>> {
      if (q.ids.length === 0) return new Map();
      const ids = [...new Set(q.ids)];
      const listing = q.listing === undefined ? undefined : { user: readerOf(q.listing.user), filters: statementFilters(q.listing.filters) };
      // Kept rows only outside a transaction: a row read inside one may never be committed.
      if (listing === undefined || db.isTransaction) return new Map((await byIdsQuery.execute(db, { ids, ...(listing === undefined ? {} : { listing }) })).map((r) => [r.id, r]));
      return keptRows(db, ids, listing, q.seen);
    },

    async findVisible(db: Db, q: { user: AuthenticatedUser; id: number }): Promise<SessionWithCreator | undefined> {
      return baseQuery(db).where('sessions.id', '=', q.id).where(visibleTo(q.user)).executeTakeFirst();
    },

    /**
     * The session visible to the user, locked against concurrent writers until the
     * transaction ends (PostgreSQL `FOR UPDATE`; SQLite's write transactions hold the whole
     * database already), so a write merges into the row as it is when it commits.
     */
    async lockVisible(db: Db, q: { user: AuthenticatedUser; id: number }): Promise<ListedRow | undefined> {
      return storage.forUpdate(listedQuery(storage, db).where('sessions.id', '=', q.id).where(visibleTo(q.user))).executeTakeFirst();
    },

    /** The session whatever its visibility: only for re-reading one the caller has already been allowed to see. */
    async find(db: Db, id: number): Promise<SessionWithCreator | undefined> {
      return baseQuery(db).where('sessions.id', '=', id).executeTakeFirst();
    },
  };
}

/** Rows beside a session's: removed occurrences, audience, what the indexer is due. */
function relatedRows() {
  return {
    async exceptionsOf(db: Db, sessionIds: readonly number[]): Promise<Map<number, Set<string>>> {
      const out = new Map<number, Set<string>>();
      if (sessionIds.length === 0) return out;
      const rows = await db
        .selectFrom('session_exceptions')
        .select(['session_id', 'occurrence_date'])
        .where('session_id', 'in', [...new Set(sessionIds)])
        .execute();
      for (const r of rows) {
        const set = out.get(r.session_id) ?? new Set<string>();
        set.add(r.occurrence_date);
        out.set(r.session_id, set);
      }
      return out;
    },

    /** Which of `ids` exist, whoever may see them. */
    async existing(db: Db, ids: readonly number[]): Promise<Set<number>> {
      if (ids.length === 0) return new Set();
      return new Set((await db.selectFrom('sessions').select('id').where('id', 'in', [...new Set(ids)]).execute()).map((r) => r.id));
    },

    /**
     * Who can see the session as it is now (a change log entry keeps it, so that a reader
     * who loses sight of the session is told it is gone): every org member when it is
     * public, else its creator, collaborators and participants.
     */
    async audienceOf(db: Db, row: Pick<SessionRow, 'id' | 'is_public' | 'created_by'>): Promise<Audience> {
      if (row.is_public === 1) return { public: true, users: [] };
      const rows = await db
        .selectFrom('session_collaborators')
        .select('user_id')
        .where('session_id', '=', row.id)
        .union(db.selectFrom('session_participants').select('user_id').where('session_id', '=', row.id))
        .execute();
      return { public: false, users: [...new Set([row.created_by, ...rows.map((r) => r.user_id)])].sort((a, b) => a - b) };
    },

    /** Sessions whose occurrence index must be built or extended to reach `before`, oldest need first. */
    dueForIndexing(db: Db, q: { before: string; limit: number }) {
      return db
        .selectFrom('sessions')
        .select([...RECURRENCE_COLUMNS, 'org_id', 'created_by', 'is_public', 'type', 'indexed_through'])
        .where((eb) => eb.or([eb('indexed_through', 'is', null), eb('indexed_through', '<', q.before)]))
        .orderBy('id')
        .limit(q.limit)
        .execute();
    },
  };
}
