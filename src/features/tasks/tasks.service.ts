import type { ChangeAction } from '../../domain/vocabulary.js';
import type { Db, Storage } from '../../storage/database.js';
import type { TaskRow } from '../../storage/tables.js';
import { UniqueViolationError } from '../../storage/storage.errors.js';
import type { Precondition } from '../../toolkit/entity-tags.js';
import { jsonBytes, jsonStringBytesAtMost, withinPageBudget } from '../../toolkit/api.js';
import { type FieldError, conflict, notFound, validationFailed } from '../../toolkit/errors.js';
import { isFlagged } from '../../toolkit/validation.js';
import { decodeCursor, encodeCursor } from '../../toolkit/paging.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { createChangesRepository, taskChange } from '../../changelog/changelog.repository.js';
import { isSessionVisible } from '../sessions/sessions.api.js';
import { sourceIdKey, toTask } from './tasks.model.js';
import { type TasksRepository, type UpsertRow, createTasksRepository } from './tasks.repository.js';
import { type BulkBody, type CreateTaskBody, DEFAULT_TASK_PAGE, type ListTasksQuery, type SourceId, type Task, type UpdateTaskBody } from './tasks.schema.js';

const NOT_VISIBLE: FieldError = { path: '/session_id', message: 'no session with this id is visible to you' };

async function requireVisibleSession(db: Db, user: AuthenticatedUser, sessionId: number): Promise<void> {
  if (!(await isSessionVisible(db, user, sessionId))) throw validationFailed([NOT_VISIBLE]);
}

/**
 * A request that already breaks a rule: its session is checked too (when the schema let
 * `session_id` through), so that one 422 lists every broken rule. Nothing is written.
 */
async function failWith(db: Db, user: AuthenticatedUser, body: unknown, errors: readonly FieldError[]): Promise<never> {
  const sessionId = typeof body === 'object' && body !== null ? (body as { session_id?: unknown }).session_id : undefined;
  const checkable = !isFlagged(errors, 'session_id') && typeof sessionId === 'number' && Number.isSafeInteger(sessionId) && sessionId > 0;
  throw validationFailed(checkable && !(await isSessionVisible(db, user, sessionId)) ? [...errors, NOT_VISIBLE] : [...errors]);
}

/** A task record's size as JSON: its variable strings escaped, plus its fixed fields; and a cheaper bound of it. */
const taskBytes = (r: TaskRow) => 250 + jsonBytes(r.context) + jsonBytes(r.source) + jsonBytes(r.source_id);
const taskBytesAtMost = (r: TaskRow) => 250 + jsonStringBytesAtMost(r.context) + jsonStringBytesAtMost(r.source) + jsonStringBytesAtMost(r.source_id);

const keyOf = (source: string, sourceId: SourceId) => `${source}\u0000${sourceIdKey(sourceId)}`;

export type TasksService = ReturnType<typeof createTasksService>;

/** The caller's own tasks, one at a time or imported in bulk. Built once per storage. */
export function createTasksService(storage: Storage) {
  const repo = createTasksRepository(storage);
  const changes = createChangesRepository(storage);

  /** Records task changes in the change log, in the transaction that makes them. */
  const logged: Logged = (db, user, entries, now) =>
    changes.record(
      db,
      entries.map(({ id, action }) => taskChange({ id, action, ownerId: user.id, actorId: user.id, now })),
    );

  const parts: Parts = { storage, repo, logged };
  return { ...taskReads(parts), ...taskWrites(parts), bulkImport: bulkImporter(parts) };
}

type Logged = (db: Db, user: AuthenticatedUser, entries: readonly { id: number; action: ChangeAction }[], now: string) => Promise<unknown>;

/** What the reads and writes below share. */
interface Parts {
  storage: Storage;
  repo: TasksRepository;
  logged: Logged;
}

/** Tasks as their owner reads them: pages, one task, and records for the change feed and event streams. */
function taskReads({ storage, repo }: Parts) {
  /**
   * The current records of those of `ids` each owner owns, by owner in the order given (the
   * change feed for one user, the event streams for many): one query.
   */
  async function recordsOfOwners(owners: readonly AuthenticatedUser[], ids: readonly number[]): Promise<Map<number, Task>[]> {
    const byOwner = new Map<number, TaskRow[]>();
    for (const r of await repo.byIds({ ownerIds: owners.map((o) => o.id), ids })) {
      const rows = byOwner.get(r.owner_id);
      if (rows === undefined) byOwner.set(r.owner_id, [r]);
      else rows.push(r);
    }
    return owners.map((owner) => new Map((byOwner.get(owner.id) ?? []).map((r) => [r.id, toTask(r, owner.handle)])));
  }

  return {
    async list(user: AuthenticatedUser, query: ListTasksQuery) {
      const limit = query.limit ?? DEFAULT_TASK_PAGE;
      const afterId = query.cursor === undefined ? undefined : decodeCursor(query.cursor, ['number'] as const)[0];
      const rows = await repo.list({ ownerId: user.id, sessionId: query.session_id, isCompleted: query.is_completed, afterId, limit: limit + 1 });
      const page = withinPageBudget(rows.slice(0, limit), taskBytes, taskBytesAtMost);
      const last = page.at(-1);
      return {
        data: page.map((r) => toTask(r, user.handle)),
        next_cursor: (rows.length > limit || page.length < Math.min(limit, rows.length)) && last !== undefined ? encodeCursor([last.id]) : null,
      };
    },

    /** For the change feed: the current records of those of `ids` the user owns, by id (one query). */
    async records(user: AuthenticatedUser, ids: readonly number[]): Promise<Map<number, Task>> {
      return (await recordsOfOwners([user], ids))[0] as Map<number, Task>;
    },

    recordsOfOwners,

    /** For the change feed's full sync: the user's tasks after `afterId`, in id order. */
    async page(user: AuthenticatedUser, q: { afterId: number; limit: number }): Promise<{ records: Task[]; more: boolean }> {
      const rows = await repo.list({ ownerId: user.id, afterId: q.afterId, limit: q.limit + 1 });
      return { records: rows.slice(0, q.limit).map((r) => toTask(r, user.handle)), more: rows.length > q.limit };
    },

    async get(user: AuthenticatedUser, id: number): Promise<Task> {
      const row = await repo.find(storage.db, { ownerId: user.id, id });
      if (row === undefined) throw notFound('task');
      return toTask(row, user.handle);
    },
  };
}

/** Creating, changing and deleting one task, each in one transaction with its change-log entry. */
function taskWrites({ storage, repo, logged }: Parts) {
  /** Locks the caller's task and checks the precondition against the record GET answers. */
  async function lockTask(trx: Db, user: AuthenticatedUser, id: number, precondition: Precondition<Task> | undefined): Promise<TaskRow> {
    const row = await repo.lock(trx, { ownerId: user.id, id });
    if (row === undefined) throw notFound('task');
    await precondition?.(() => Promise.resolve(toTask(row, user.handle)));
    return row;
  }

  return {
    /** `schemaErrors`: what the request schema rejected (attachValidation); the other rules are still checked so one 422 lists all. */
    async create(user: AuthenticatedUser, body: CreateTaskBody, schemaErrors: readonly FieldError[] = []): Promise<Task> {
      const errors = [...schemaErrors];
      const origin = typeof body === 'object' && body !== null ? body : ({} as Partial<CreateTaskBody>);
      const source = origin.source ?? null;
      const sourceId = origin.source_id ?? null;
      if (!isFlagged(errors, 'source') && !isFlagged(errors, 'source_id') && (source === null) !== (sourceId === null)) {
        errors.push({ path: source === null ? '/source' : '/source_id', message: 'source and source_id are both set or both null' });
      }
      if (errors.length > 0) return failWith(storage.db, user, body, errors);
      try {
        // The session is checked in the transaction that inserts, so it cannot vanish in between.
        const row = await storage.transaction(async (trx) => {
          await requireVisibleSession(trx, user, body.session_id);
          const now = new Date().toISOString();
          const inserted = await repo.insert(trx, {
            ownerId: user.id,
            context: body.context.trim(),
            isCompleted: body.is_completed ?? false,
            source,
            sourceId,
            sessionId: body.session_id,
            now,
          });
          await logged(trx, user, [{ id: inserted.id, action: 'created' }], now);
          return inserted;
        });
        return toTask(row, user.handle);
      } catch (error) {
        if (error instanceof UniqueViolationError) {
          throw conflict('You already have a task with this source and source_id; import it with POST /tasks/bulk to update it.');
        }
        throw error;
      }
    },

    /** Reads, compares (`precondition`: the request's If-Match) and writes in one transaction, the row locked first. */
    async update(user: AuthenticatedUser, id: number, body: UpdateTaskBody, precondition?: Precondition<Task>): Promise<Task> {
      if (body.context === undefined && body.is_completed === undefined) {
        throw validationFailed([{ path: '/', message: 'send at least one of context, is_completed' }]);
      }
      const row = await storage.transaction(async (trx) => {
        const current = await lockTask(trx, user, id, precondition);
        // Leaving the task as it is changes nothing: no new updated_at, ETag or change (contract section 10).
        const same = (body.context === undefined || body.context.trim() === current.context) && (body.is_completed === undefined || (body.is_completed ? 1 : 0) === current.is_completed);
        if (same) return current;
        const now = new Date().toISOString();
        const updated = await repo.update(trx, { ownerId: user.id, id, context: body.context?.trim(), isCompleted: body.is_completed, now });
        if (updated !== undefined) await logged(trx, user, [{ id, action: 'updated' }], now);
        return updated;
      });
      if (row === undefined) throw notFound('task');
      return toTask(row, user.handle);
    },

    async delete(user: AuthenticatedUser, id: number, precondition?: Precondition<Task>): Promise<void> {
      await storage.transaction(async (trx) => {
        await lockTask(trx, user, id, precondition);
        await repo.delete(trx, { ownerId: user.id, id });
        await logged(trx, user, [{ id, action: 'deleted' }], new Date().toISOString());
      });
    },
  };
}

/**
 * Imports tasks all-or-nothing. Within one request the last item with a key wins;
 * rows go to the database sorted by key so that overlapping concurrent imports
 * take row locks in one order.
 */
function bulkImporter({ storage, repo, logged }: Parts) {
  return async function bulkImport(user: AuthenticatedUser, body: BulkBody, schemaErrors: readonly FieldError[] = []) {
    if (schemaErrors.length > 0) return failWith(storage.db, user, body, schemaErrors);
    const lastByKey = new Map<string, UpsertRow>();
    for (const item of body.tasks) {
      lastByKey.set(keyOf(item.source, item.source_id), { context: item.context.trim(), source: item.source, sourceId: item.source_id });
    }
    const rows = [...lastByKey].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
    const now = new Date().toISOString();
    const stored = await storage.transaction(async (trx) => {
      await requireVisibleSession(trx, user, body.session_id);
      const upserted = await repo.upsert(trx, { ownerId: user.id, sessionId: body.session_id, rows, now });
      await logged(trx, user, upserted.map((r) => ({ id: r.id, action: r.version === 1 ? 'created' : 'updated' })), now);
      // Rows the import left as they were: not written, not logged (contract section 10), still answered.
      const written = new Set(upserted.map((r) => keyOf(r.source ?? '', r.source_id ?? '')));
      const kept = rows.filter((r) => !written.has(keyOf(r.source, r.sourceId)));
      const unchanged = kept.length === 0 ? [] : await repo.byKeys(trx, { ownerId: user.id, keys: kept });
      return { upserted, unchanged };
    });
    const byKey = new Map([...stored.upserted, ...stored.unchanged].map((r) => [keyOf(r.source ?? '', r.source_id ?? ''), r]));
    const created = stored.upserted.filter((r) => r.version === 1).length;
    return {
      data: body.tasks.map((item) => {
        const row = byKey.get(keyOf(item.source, item.source_id));
        if (row === undefined) throw new Error('upsert returned no row for an imported key');
        return toTask(row, user.handle);
      }),
      meta: { created, updated: stored.upserted.length - created, unchanged: stored.unchanged.length },
    };
  };
}
