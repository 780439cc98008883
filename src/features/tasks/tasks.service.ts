import { conflict, notFound, validationFailed } from '../../http/errors.js';
import { decodeCursor, encodeCursor } from '../../http/paging.js';
import type { Db, Storage } from '../../storage/database.js';
import { UniqueViolationError } from '../../storage/storage.errors.js';
import type { AuthenticatedUser } from '../auth/auth.repository.js';
import { isSessionVisible } from '../sessions/sessions.visibility.js';
import * as repo from './tasks.repository.js';
import type { BulkBody, CreateTaskBody, ListTasksQuery, Task, UpdateTaskBody } from './tasks.schema.js';

async function requireVisibleSession(db: Db, user: AuthenticatedUser, sessionId: number): Promise<void> {
  if (!(await isSessionVisible(db, user, sessionId))) {
    throw validationFailed([{ path: '/session_id', message: 'no session with this id is visible to you' }]);
  }
}

export async function listTasks(storage: Storage, user: AuthenticatedUser, query: ListTasksQuery) {
  const limit = query.limit ?? 100;
  const afterId = query.cursor === undefined ? undefined : decodeCursor(query.cursor, ['number'] as const)[0];
  const rows = await repo.listTasks(storage.db, user.id, {
    sessionId: query.session_id,
    isCompleted: query.is_completed,
    afterId,
    limit: limit + 1,
  });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    data: page.map((r) => repo.toTask(r, user.handle)),
    next_cursor: rows.length > limit && last !== undefined ? encodeCursor([last.id]) : null,
  };
}

export async function getTask(storage: Storage, user: AuthenticatedUser, id: number): Promise<Task> {
  const row = await repo.findTask(storage.db, user.id, id);
  if (row === undefined) throw notFound('task');
  return repo.toTask(row, user.handle);
}

export async function createTask(storage: Storage, user: AuthenticatedUser, body: CreateTaskBody): Promise<Task> {
  const source = body.source ?? null;
  const sourceId = body.source_id ?? null;
  if ((source === null) !== (sourceId === null)) {
    throw validationFailed([
      { path: source === null ? '/source' : '/source_id', message: 'source and source_id are both set or both null' },
    ]);
  }
  await requireVisibleSession(storage.db, user, body.session_id);
  try {
    const row = await repo.insertTask(storage.db, {
      ownerId: user.id,
      context: body.context.trim(),
      isCompleted: body.is_completed ?? false,
      source,
      sourceId,
      sessionId: body.session_id,
      now: new Date().toISOString(),
    });
    return repo.toTask(row, user.handle);
  } catch (error) {
    if (storage.dialect.translateError(error) instanceof UniqueViolationError) {
      throw conflict('You already have a task with this source and source_id; import it with POST /tasks/bulk to update it.');
    }
    throw error;
  }
}

export async function updateTask(storage: Storage, user: AuthenticatedUser, id: number, body: UpdateTaskBody): Promise<Task> {
  if (body.context === undefined && body.is_completed === undefined) {
    throw validationFailed([{ path: '/', message: 'send at least one of context, is_completed' }]);
  }
  const row = await repo.updateTask(storage.db, user.id, id, {
    context: body.context?.trim(),
    isCompleted: body.is_completed,
    now: new Date().toISOString(),
  });
  if (row === undefined) throw notFound('task');
  return repo.toTask(row, user.handle);
}

export async function deleteTask(storage: Storage, user: AuthenticatedUser, id: number): Promise<void> {
  if (!(await repo.deleteTask(storage.db, user.id, id))) throw notFound('task');
}

const keyOf = (source: string, sourceId: number) => `${source}\u0000${sourceId}`;

/**
 * Imports tasks all-or-nothing. Within one request the last item with a key wins;
 * rows go to the database sorted by key so that overlapping concurrent imports
 * take row locks in one order.
 */
export async function bulkImport(storage: Storage, user: AuthenticatedUser, body: BulkBody) {
  const lastByKey = new Map<string, repo.UpsertRow>();
  for (const item of body.tasks) {
    lastByKey.set(keyOf(item.source, item.source_id), { context: item.context.trim(), source: item.source, sourceId: item.source_id });
  }
  const rows = [...lastByKey.values()].sort((a, b) =>
    a.source < b.source ? -1 : a.source > b.source ? 1 : a.sourceId - b.sourceId,
  );
  const now = new Date().toISOString();
  const stored = await storage.transaction(async (trx) => {
    await requireVisibleSession(trx, user, body.session_id);
    return repo.upsertTasks(trx, user.id, body.session_id, rows, now, storage.dialect.maxParameters);
  });
  const byKey = new Map(stored.map((r) => [keyOf(r.source ?? '', r.source_id ?? -1), r]));
  const created = stored.filter((r) => r.version === 1).length;
  return {
    data: body.tasks.map((item) => {
      const row = byKey.get(keyOf(item.source, item.source_id));
      if (row === undefined) throw new Error('upsert returned no row for an imported key');
      return repo.toTask(row, user.handle);
    }),
    meta: { created, updated: stored.length - created },
  };
}
