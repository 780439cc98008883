import type { Db, Storage } from '../../storage/database.js';
import { UniqueViolationError } from '../../storage/storage.errors.js';
import { conflict, notFound, validationFailed } from '../../toolkit/errors.js';
import { decodeCursor, encodeCursor } from '../../toolkit/paging.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { isSessionVisible } from '../sessions/sessions.visibility.js';
import { sourceIdKey, toTask } from './tasks.model.js';
import { type UpsertRow, createTasksRepository } from './tasks.repository.js';
import { type BulkBody, type CreateTaskBody, DEFAULT_TASK_PAGE, type ListTasksQuery, type SourceId, type Task, type UpdateTaskBody } from './tasks.schema.js';

async function requireVisibleSession(db: Db, user: AuthenticatedUser, sessionId: number): Promise<void> {
  if (!(await isSessionVisible(db, user, sessionId))) {
    throw validationFailed([{ path: '/session_id', message: 'no session with this id is visible to you' }]);
  }
}

const keyOf = (source: string, sourceId: SourceId) => `${source}\u0000${sourceIdKey(sourceId)}`;

export type TasksService = ReturnType<typeof createTasksService>;

/** The caller's own tasks, one at a time or imported in bulk. Built once per storage. */
export function createTasksService(storage: Storage) {
  const repo = createTasksRepository(storage);

  return {
    async list(user: AuthenticatedUser, query: ListTasksQuery) {
      const limit = query.limit ?? DEFAULT_TASK_PAGE;
      const afterId = query.cursor === undefined ? undefined : decodeCursor(query.cursor, ['number'] as const)[0];
      const rows = await repo.list({ ownerId: user.id, sessionId: query.session_id, isCompleted: query.is_completed, afterId, limit: limit + 1 });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return {
        data: page.map((r) => toTask(r, user.handle)),
        next_cursor: rows.length > limit && last !== undefined ? encodeCursor([last.id]) : null,
      };
    },

    async get(user: AuthenticatedUser, id: number): Promise<Task> {
      const row = await repo.find(storage.db, { ownerId: user.id, id });
      if (row === undefined) throw notFound('task');
      return toTask(row, user.handle);
    },

    async create(user: AuthenticatedUser, body: CreateTaskBody): Promise<Task> {
      const source = body.source ?? null;
      const sourceId = body.source_id ?? null;
      if ((source === null) !== (sourceId === null)) {
        throw validationFailed([
          { path: source === null ? '/source' : '/source_id', message: 'source and source_id are both set or both null' },
        ]);
      }
      try {
        // The session is checked in the transaction that inserts, so it cannot vanish in between.
        const row = await storage.transaction(async (trx) => {
          await requireVisibleSession(trx, user, body.session_id);
          return repo.insert(trx, {
            ownerId: user.id,
            context: body.context.trim(),
            isCompleted: body.is_completed ?? false,
            source,
            sourceId,
            sessionId: body.session_id,
            now: new Date().toISOString(),
          });
        });
        return toTask(row, user.handle);
      } catch (error) {
        if (error instanceof UniqueViolationError) {
          throw conflict('You already have a task with this source and source_id; import it with POST /tasks/bulk to update it.');
        }
        throw error;
      }
    },

    async update(user: AuthenticatedUser, id: number, body: UpdateTaskBody): Promise<Task> {
      if (body.context === undefined && body.is_completed === undefined) {
        throw validationFailed([{ path: '/', message: 'send at least one of context, is_completed' }]);
      }
      const row = await repo.update(storage.db, {
        ownerId: user.id,
        id,
        context: body.context?.trim(),
        isCompleted: body.is_completed,
        now: new Date().toISOString(),
      });
      if (row === undefined) throw notFound('task');
      return toTask(row, user.handle);
    },

    async delete(user: AuthenticatedUser, id: number): Promise<void> {
      if (!(await repo.delete(storage.db, { ownerId: user.id, id }))) throw notFound('task');
    },

    /**
     * Imports tasks all-or-nothing. Within one request the last item with a key wins;
     * rows go to the database sorted by key so that overlapping concurrent imports
     * take row locks in one order.
     */
    async bulkImport(user: AuthenticatedUser, body: BulkBody) {
      const lastByKey = new Map<string, UpsertRow>();
      for (const item of body.tasks) {
        lastByKey.set(keyOf(item.source, item.source_id), { context: item.context.trim(), source: item.source, sourceId: item.source_id });
      }
      const rows = [...lastByKey].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
      const now = new Date().toISOString();
      const stored = await storage.transaction(async (trx) => {
        await requireVisibleSession(trx, user, body.session_id);
        return repo.upsert(trx, { ownerId: user.id, sessionId: body.session_id, rows, now });
      });
      const byKey = new Map(stored.map((r) => [keyOf(r.source ?? '', r.source_id ?? ''), r]));
      const created = stored.filter((r) => r.version === 1).length;
      return {
        data: body.tasks.map((item) => {
          const row = byKey.get(keyOf(item.source, item.source_id));
          if (row === undefined) throw new Error('upsert returned no row for an imported key');
          return toTask(row, user.handle);
        }),
        meta: { created, updated: stored.length - created },
      };
    },
  };
}
