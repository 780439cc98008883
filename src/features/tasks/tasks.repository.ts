import type { Db, Storage } from '../../storage/database.js';
import { prepared } from '../../storage/prepared.js';
import type { TaskRow } from '../../storage/tables.js';
import { sourceIdColumns, sourceIdKey } from './tasks.model.js';
import type { SourceId } from './tasks.schema.js';

export interface UpsertRow {
  context: string;
  source: string;
  sourceId: SourceId;
}

export type TasksRepository = ReturnType<typeof createTasksRepository>;

interface ListQuery {
  ownerId: number;
  sessionId?: number;
  isCompleted?: boolean;
  afterId?: number;
  limit: number;
}

/** The statement of list(): the one `GET /tasks` runs, built once per shape (storage/prepared.ts). */
const listQuery = prepared(['ownerId', 'sessionId', 'afterId', 'limit'], (db: Db, q: ListQuery) => {
  let query = db.selectFrom('tasks').selectAll().where('owner_id', '=', q.ownerId);
  if (q.sessionId !== undefined) query = query.where('session_id', '=', q.sessionId);
  if (q.isCompleted !== undefined) query = query.where('is_completed', '=', q.isCompleted ? 1 : 0);
  if (q.afterId !== undefined) query = query.where('id', '>', q.afterId);
  return query.orderBy('id').limit(q.limit);
});

/** Tasks, always scoped to their owner. Built once per storage (its statement size limit inside). */
export function createTasksRepository(storage: Storage) {
  return { ...taskRows(storage), ...importedTasks(storage) };
}

/** One task or a page of them, and the writes of the task endpoints. */
function taskRows(storage: Storage) {
  return {
    async find(db: Db, q: { ownerId: number; id: number }): Promise<TaskRow | undefined> {
      return db.selectFrom('tasks').selectAll().where('id', '=', q.id).where('owner_id', '=', q.ownerId).executeTakeFirst();
    },

    /** The task, locked against concurrent writers until the transaction ends (see Storage.forUpdate). */
    async lock(db: Db, q: { ownerId: number; id: number }): Promise<TaskRow | undefined> {
      return storage.forUpdate(db.selectFrom('tasks').selectAll().where('id', '=', q.id).where('owner_id', '=', q.ownerId)).executeTakeFirst();
    },

    /** Those of `ids` that one of `ownerIds` owns. */
    async byIds(q: { ownerIds: readonly number[]; ids: readonly number[] }): Promise<TaskRow[]> {
      if (q.ids.length === 0 || q.ownerIds.length === 0) return [];
      return storage.db
        .selectFrom('tasks')
        .selectAll()
        .where('owner_id', 'in', [...new Set(q.ownerIds)])
        .where('id', 'in', [...new Set(q.ids)])
        .execute();
    },

    async list(q: ListQuery): Promise<TaskRow[]> {
      return listQuery.execute(storage.db, q);
    },

    async insert(
      db: Db,
      values: { ownerId: number; context: string; isCompleted: boolean; source: string | null; sourceId: SourceId | null; sessionId: number; now: string },
    ): Promise<TaskRow> {
      return db
        .insertInto('tasks')
        .values({
          owner_id: values.ownerId,
          context: values.context,
          is_completed: values.isCompleted ? 1 : 0,
          completed_at: values.isCompleted ? values.now : null,
          source: values.source,
          ...sourceIdColumns(values.sourceId),
          session_id: values.sessionId,
          created_at: values.now,
          updated_at: values.now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    async update(
      db: Db,
      q: { ownerId: number; id: number; context?: string; isCompleted?: boolean; now: string },
    ): Promise<TaskRow | undefined> {
      return db
        .updateTable('tasks')
        .set((eb) => ({
          ...(q.context === undefined ? {} : { context: q.context }),
          ...(q.isCompleted === undefined ? {} : { is_completed: q.isCompleted ? 1 : 0 }),
          // A task that stays completed keeps its completion instant; reopening it clears the instant.
          ...(q.isCompleted === undefined ? {} : { completed_at: q.isCompleted ? eb.fn.coalesce('completed_at', eb.val(q.now)) : null }),
          updated_at: q.now,
          version: eb('version', '+', 1),
        }))
        .where('id', '=', q.id)
        .where('owner_id', '=', q.ownerId)
        .returningAll()
        .executeTakeFirst();
    },

    async delete(db: Db, q: { ownerId: number; id: number }): Promise<boolean> {
      const result = await db.deleteFrom('tasks').where('id', '=', q.id).where('owner_id', '=', q.ownerId).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}

/** Tasks by their (source, source_id) keys: what an import reads and writes. */
function importedTasks(storage: Storage) {
  return {
    /** The owner's tasks with these (source, source_id) keys. */
    async byKeys(db: Db, q: { ownerId: number; keys: readonly { source: string; sourceId: SourceId }[] }): Promise<TaskRow[]> {
      const bySource = new Map<string, string[]>();
      for (const k of q.keys) {
        const ids = bySource.get(k.source);
        if (ids === undefined) bySource.set(k.source, [sourceIdKey(k.sourceId)]);
        else ids.push(sourceIdKey(k.sourceId));
      }
      const chunkSize = Math.max(1, storage.maxParameters - 8);
      const out: TaskRow[] = [];
      for (const [source, ids] of bySource) {
        for (let i = 0; i < ids.length; i += chunkSize) {
          out.push(...(await db.selectFrom('tasks').selectAll().where('owner_id', '=', q.ownerId).where('source', '=', source).where('source_id', 'in', ids.slice(i, i + chunkSize)).execute()));
        }
      }
      return out;
    },

    /**
     * Inserts or updates rows on (owner, source, source_id), as few statements as the
     * database's parameter limit allows, letting the unique index arbitrate concurrent
     * imports. Rows must be free of duplicate keys (a statement may not touch a row twice)
     * and should be sorted by key, so concurrent imports lock rows in the same order and
     * cannot deadlock. `version` = 1 on a returned row means this statement inserted it. A
     * row the import would leave as it is is not written and not returned (contract section
     * 10, a no-op import): read it with `byKeys`.
     */
    async upsert(db: Db, q: { ownerId: number; sessionId: number; rows: readonly UpsertRow[]; now: string }): Promise<TaskRow[]> {
      const perRow = 9;
      const chunkSize = Math.max(1, Math.floor(storage.maxParameters / perRow));
      const out: TaskRow[] = [];
      for (let i = 0; i < q.rows.length; i += chunkSize) {
        const chunk = q.rows.slice(i, i + chunkSize);
        const returned = await db
          .insertInto('tasks')
          .values(
            chunk.map((r) => ({
              owner_id: q.ownerId,
              context: r.context,
              is_completed: 0 as const,
              source: r.source,
              ...sourceIdColumns(r.sourceId),
              session_id: q.sessionId,
              created_at: q.now,
              updated_at: q.now,
            })),
          )
          .onConflict((oc) =>
            oc.columns(['owner_id', 'source', 'source_id']).doUpdateSet((eb) => ({
              context: eb.ref('excluded.context'),
              // Returned in the JSON type it was last sent with.
              source_id_type: eb.ref('excluded.source_id_type'),
              updated_at: eb.ref('excluded.updated_at'),
              version: eb('tasks.version', '+', 1),
            })).where((eb) => eb.or([eb('tasks.context', '<>', eb.ref('excluded.context')), eb('tasks.source_id_type', '<>', eb.ref('excluded.source_id_type'))])),
          )
          .returningAll()
          .execute();
        out.push(...returned);
      }
      return out;
    },
  };
}
