import type { Db } from '../../storage/database.js';
import type { TaskRow } from '../../storage/tables.js';
import type { Task } from './tasks.schema.js';

export function toTask(row: TaskRow, ownerHandle: string): Task {
  return {
    id: String(row.id),
    context: row.context,
    is_completed: row.is_completed === 1,
    owner: ownerHandle,
    source: row.source,
    source_id: row.source_id,
    session_id: row.session_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export async function findTask(db: Db, ownerId: number, id: number): Promise<TaskRow | undefined> {
  return db.selectFrom('tasks').selectAll().where('id', '=', id).where('owner_id', '=', ownerId).executeTakeFirst();
}

export async function listTasks(
  db: Db,
  ownerId: number,
  filter: { sessionId?: number; isCompleted?: boolean; afterId?: number; limit: number },
): Promise<TaskRow[]> {
  let query = db.selectFrom('tasks').selectAll().where('owner_id', '=', ownerId);
  if (filter.sessionId !== undefined) query = query.where('session_id', '=', filter.sessionId);
  if (filter.isCompleted !== undefined) query = query.where('is_completed', '=', filter.isCompleted ? 1 : 0);
  if (filter.afterId !== undefined) query = query.where('id', '>', filter.afterId);
  return query.orderBy('id').limit(filter.limit).execute();
}

export async function insertTask(
  db: Db,
  values: { ownerId: number; context: string; isCompleted: boolean; source: string | null; sourceId: number | null; sessionId: number; now: string },
): Promise<TaskRow> {
  return db
    .insertInto('tasks')
    .values({
      owner_id: values.ownerId,
      context: values.context,
      is_completed: values.isCompleted ? 1 : 0,
      source: values.source,
      source_id: values.sourceId,
      session_id: values.sessionId,
      created_at: values.now,
      updated_at: values.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateTask(
  db: Db,
  ownerId: number,
  id: number,
  changes: { context?: string; isCompleted?: boolean; now: string },
): Promise<TaskRow | undefined> {
  return db
    .updateTable('tasks')
    .set((eb) => ({
      ...(changes.context === undefined ? {} : { context: changes.context }),
      ...(changes.isCompleted === undefined ? {} : { is_completed: changes.isCompleted ? 1 : 0 }),
      updated_at: changes.now,
      version: eb('version', '+', 1),
    }))
    .where('id', '=', id)
    .where('owner_id', '=', ownerId)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteTask(db: Db, ownerId: number, id: number): Promise<boolean> {
  const result = await db.deleteFrom('tasks').where('id', '=', id).where('owner_id', '=', ownerId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export interface UpsertRow {
  context: string;
  source: string;
  sourceId: number;
}

/**
 * Inserts or updates rows on (owner, source, source_id) in one statement per chunk,
 * letting the unique index arbitrate concurrent imports. Rows must be free of
 * duplicate keys (a statement may not touch a row twice) and should be sorted by
 * key, so concurrent imports lock rows in the same order and cannot deadlock.
 * `version` = 1 on a returned row means this statement inserted it.
 */
export async function upsertTasks(
  db: Db,
  ownerId: number,
  sessionId: number,
  rows: readonly UpsertRow[],
  now: string,
  maxParameters: number,
): Promise<TaskRow[]> {
  const perRow = 8;
  const chunkSize = Math.max(1, Math.floor(maxParameters / perRow));
  const out: TaskRow[] = [];
  for (let i = 0; i < rows.length; i += chunkSize) {
    const chunk = rows.slice(i, i + chunkSize);
    const returned = await db
      .insertInto('tasks')
      .values(
        chunk.map((r) => ({
          owner_id: ownerId,
          context: r.context,
          is_completed: 0 as const,
          source: r.source,
          source_id: r.sourceId,
          session_id: sessionId,
          created_at: now,
          updated_at: now,
        })),
      )
      .onConflict((oc) =>
        oc.columns(['owner_id', 'source', 'source_id']).doUpdateSet((eb) => ({
          context: eb.ref('excluded.context'),
          updated_at: eb.ref('excluded.updated_at'),
          version: eb('tasks.version', '+', 1),
        })),
      )
      .returningAll()
      .execute();
    out.push(...returned);
  }
  return out;
}
