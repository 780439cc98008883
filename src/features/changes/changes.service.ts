import type { Storage } from '../../storage/database.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import type { SessionsService } from '../sessions/sessions.api.js';
import type { TasksService } from '../tasks/tasks.service.js';
import { type ChangesRepository, type PositionedChange, createChangesRepository } from '../../changelog/changelog.repository.js';
import { type FeedPage, decodeFeedCursor, encodeFeedCursor } from './changes.cursor.js';
import { type FeedSources, forReaders, fullSync, since } from './changes.pages.js';
import { type ChangeEntry, type ChangesQuery, DEFAULT_CHANGES_PAGE } from './changes.schema.js';

export { CURSOR_VALIDITY_MS, type FeedPage, type FeedPosition, type PositionedEntry, decodeFeedCursor, encodeFeedCursor } from './changes.cursor.js';
export { SCAN_LIMIT } from './changes.pages.js';

/** How long one read of the log's head serves every request (see sharedHead). */
export const HEAD_TTL_MS = 100;

/**
 * The log's head, shared by the requests of a moment: clients polling with up-to-date
 * cursors then cost no query beyond their token's. Where storage tells when data changed
 * (SQLite's data version), the head is read again only then; otherwise at most every
 * HEAD_TTL_MS. An older head is still a safe bound (everything up to it is committed);
 * a change is only seen up to HEAD_TTL_MS later.
 */
function createSharedHead(storage: Storage, changes: ChangesRepository): () => Promise<number> {
  let head: { at: number; version: string | undefined; value: Promise<number> } | undefined;
  return () => {
    const now = Date.now();
    const version = storage.dataVersion();
    const fresh = head !== undefined && (version !== undefined ? head.version === version : now - head.at < HEAD_TTL_MS);
    if (!fresh || head === undefined) {
      const value = changes.head();
      head = { at: now, version, value };
      // A failed read is not kept for the next requests.
      value.catch(() => (head = undefined));
    }
    return head.value;
  };
}

export type ChangesService = ReturnType<typeof createChangesService>;

/**
 * The change feed: a full sync, then what changed since, read from the change log by
 * position (commit order) and shown through the sessions' and tasks' own read models
 * (changes.pages.ts). Built once per storage.
 */
export function createChangesService(storage: Storage, deps: { sessions: SessionsService; tasks: TasksService; changes?: ChangesRepository }) {
  const changes = deps.changes ?? createChangesRepository(storage);
  const src: FeedSources = { sessions: deps.sessions, tasks: deps.tasks, changes };
  const sharedHead = createSharedHead(storage, changes);

  return {
    /** GET /changes: a page and the cursor after it. */
    async page(user: AuthenticatedUser, query: ChangesQuery): Promise<{ data: ChangeEntry[]; next_cursor: string }> {
      const limit = query.limit ?? DEFAULT_CHANGES_PAGE;
      const readAt = Date.now();
      const at = query.cursor === undefined ? undefined : decodeFeedCursor(query.cursor, readAt);
      let result: FeedPage;
      if (at === undefined || at.phase !== 'log') {
        const start = at ?? { phase: 'sessions' as const, head: await changes.head(), startsAt: '', id: 0, issuedAt: readAt };
        result = await fullSync(src, user, start, limit);
      } else {
        result = await since(src, user, { after: at.head, upTo: await sharedHead(), limit, readAt });
      }
      return { data: result.entries.map((e) => e.entry), next_cursor: encodeFeedCursor(result.next) };
    },

    /** For the event stream: what changed after `after` up to `upTo`, entry by entry with its position. */
    since: (user: AuthenticatedUser, q: { after: number; upTo: number; limit: number }) => since(src, user, { ...q, readAt: Date.now() }),

    /** For the event streams: the entries of rows read once for all of them, by reader (see forReaders). */
    forReaders: (readers: readonly AuthenticatedUser[], rows: readonly PositionedChange[]) => forReaders(src, readers, rows),

    /** The newest committed position: where a stream that starts without a cursor begins. */
    head: () => changes.head(),
  };
}
