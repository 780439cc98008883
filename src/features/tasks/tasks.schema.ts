import { type Static, Type } from 'typebox';
import { Cursor, Instant, Limit, Nullable, PositiveId, READ_ONLY_FIELDS, ReadOnlyIgnored, TrimmedText } from '../../toolkit/schema-helpers.js';

export const MAX_BULK_ITEMS = 1000;

const Context = TrimmedText(2000, { description: 'Task text, 1–2000 characters after trimming (stored trimmed).' });
const Source = Type.String({ minLength: 1, maxLength: 64, description: 'Name of the external origin, e.g. `todoist`.' });
const SourceId = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Id of the task in its origin.' });
const SessionId = PositiveId('A session visible to you.');

export const TaskSchema = Type.Object(
  {
    id: Type.String({ pattern: '^[0-9]+$', description: 'Task id, digits as a string.' }),
    context: Type.String(),
    is_completed: Type.Boolean(),
    owner: Type.String({ description: 'Handle of the owner (always you).' }),
    source: Nullable(Type.String()),
    source_id: Nullable(Type.Integer()),
    session_id: Nullable(Type.Integer({ description: 'null once the session was deleted.' })),
    created_at: Instant(),
    updated_at: Instant(),
  },
  { $id: 'Task', additionalProperties: false },
);
export type Task = Static<typeof TaskSchema>;

const taskReadOnly = ReadOnlyIgnored(READ_ONLY_FIELDS);

export const CreateTaskBody = Type.Object(
  {
    context: Context,
    session_id: SessionId,
    is_completed: Type.Optional(Type.Boolean({ default: false })),
    source: Type.Optional(Nullable(Source)),
    source_id: Type.Optional(Nullable(SourceId)),
    ...taskReadOnly,
  },
  { additionalProperties: false, description: '`source` and `source_id` are both null (a task made here) or both set.' },
);
export type CreateTaskBody = Static<typeof CreateTaskBody>;

export const UpdateTaskBody = Type.Object(
  {
    context: Type.Optional(Context),
    is_completed: Type.Optional(Type.Boolean()),
    ...taskReadOnly,
    ...ReadOnlyIgnored(['source', 'source_id', 'session_id'] as const),
  },
  { additionalProperties: false, description: 'At least one of `context`, `is_completed`.' },
);
export type UpdateTaskBody = Static<typeof UpdateTaskBody>;

export const BulkItem = Type.Object({ context: Context, source: Source, source_id: SourceId, ...taskReadOnly }, { additionalProperties: false });
export type BulkItem = Static<typeof BulkItem>;

export const BulkBody = Type.Object(
  {
    session_id: SessionId,
    tasks: Type.Array(BulkItem, { minItems: 1, maxItems: MAX_BULK_ITEMS }),
    ...taskReadOnly,
  },
  { additionalProperties: false },
);
export type BulkBody = Static<typeof BulkBody>;

export const ListTasksQuery = Type.Object(
  {
    session_id: Type.Optional(PositiveId('Only tasks committed to this session.')),
    is_completed: Type.Optional(Type.Boolean()),
    limit: Type.Optional(Limit(500, 100)),
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false },
);
export type ListTasksQuery = Static<typeof ListTasksQuery>;

const TaskRef = Type.Ref('Task');
export const TaskEnvelope = Type.Object({ data: TaskRef });
export const TaskList = Type.Object({ data: Type.Array(TaskRef), next_cursor: Nullable(Type.String()) });
export const BulkResult = Type.Object({
  data: Type.Array(TaskRef, { description: 'One task per request item, in request order.' }),
  meta: Type.Object({ created: Type.Integer(), updated: Type.Integer() }),
});
