import type { TaskRow } from '../../storage/tables.js';
import type { Task } from './tasks.schema.js';

/** The one place a task row becomes its API shape. */
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
