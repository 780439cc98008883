import type { TaskRow } from '../../storage/tables.js';
import type { SourceId, Task } from './tasks.schema.js';

/** The de-duplication key of an origin's id is its text: `42` and `"42"` name one external task (contract section 6). */
export const sourceIdKey = (id: SourceId): string => String(id);

/** An origin's id as stored: its key, and the JSON type it came as (to be returned as such). */
export function sourceIdColumns(id: SourceId | null): Pick<TaskRow, 'source_id' | 'source_id_type'> {
  if (id === null) return { source_id: null, source_id_type: null };
  return { source_id: sourceIdKey(id), source_id_type: typeof id === 'number' ? 'integer' : 'string' };
}

/** The one place a task row becomes its API shape: `source_id` in the JSON type it was last sent with. */
export function toTask(row: TaskRow, ownerHandle: string): Task {
  return {
    id: String(row.id),
    context: row.context,
    is_completed: row.is_completed === 1,
    owner: ownerHandle,
    source: row.source,
    source_id: row.source_id === null ? null : row.source_id_type === 'integer' ? Number(row.source_id) : row.source_id,
    session_id: row.session_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
