import { type Static, Type } from 'typebox';
import { Cursor, Instant, Limit, Nullable, PositiveId, READ_ONLY_FIELDS, ReadOnlyIgnored, TrimmedText } from '../../toolkit/schema-helpers.js';

export const MAX_BULK_ITEMS = 1000;
/**
 * GET /tasks pages: without `limit` a client that knows nothing of cursors gets every task
 * a normal user has (contract section 6); `next_cursor` still says when there is more.
 */
export const MAX_TASK_PAGE = 1000;
export const DEFAULT_TASK_PAGE = 1000;
/** Unicode control characters (C0, DEL, C1), which no origin's id contains. */
const NO_CONTROL_CHARACTERS = '^[^\\u0000-\\u001F\\u007F-\\u009F]*$';

const Context = TrimmedText(2000, { description: 'Task text, 1–2000 characters after trimming (stored trimmed).' });
const Source = Type.String({ minLength: 1, maxLength: 64, description: 'Name of the external origin, e.g. `todoist`.' });
/**
 * An origin's id (contract section 6): a non-negative safe integer, as the interface
 * document has it, or a string (Todoist, Linear, Jira and GitHub ids are strings). One
 * schema of several types, not an anyOf, so a bad value gets only the rule it breaks.
 */
const sourceIdRules = {
  minimum: 0,
  maximum: Number.MAX_SAFE_INTEGER,
  minLength: 1,
  maxLength: 255,
  pattern: NO_CONTROL_CHARACTERS,
  'x-message': 'must not contain control characters',
  description:
    'Id of the task in its origin: a non-negative integer (at most 2^53 − 1) or a string of 1–255 characters without control characters. ' +
    'Returned in the JSON type it was last sent with; `42` and `"42"` name the same task.',
};
const SourceId = Type.Unsafe<number | string>({ type: ['integer', 'string'], ...sourceIdRules });
export type SourceId = Static<typeof SourceId>;
const SessionId = PositiveId('A session visible to you.');

export const TaskSchema = Type.Object(
  {
    id: Type.String({ pattern: '^[0-9]+$', description: 'Task id, digits as a string.' }),
    context: Type.String(),
    is_completed: Type.Boolean(),
    owner: Type.String({ description: 'Handle of the owner (always you).' }),
    source: Nullable(Type.String()),
    source_id: Type.Unsafe<SourceId | null>({ type: ['integer', 'string', 'null'], description: 'In the JSON type it was last sent with.' }),
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
    source_id: Type.Optional(Type.Unsafe<SourceId | null>({ type: ['integer', 'string', 'null'], ...sourceIdRules })),
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
    limit: Type.Optional(Limit(MAX_TASK_PAGE, DEFAULT_TASK_PAGE)),
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
