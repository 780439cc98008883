import { type Static, Type } from 'typebox';
import { Named } from '../../toolkit/openapi.js';
import { Cursor, Envelope, Instant, Limit, Nullable, Page, PositiveId, READ_ONLY_FIELDS, ReadOnlyIgnored, TrimmedText } from '../../toolkit/schema-helpers.js';

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
const Source = Type.String({ minLength: 1, maxLength: 64, description: 'Name of the external origin, e.g. `linear`, `todoist`.' });
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

const NOW = '2026-12-01T08:00:00.000Z';
const IMPORTED = { context: 'Fix the login redirect loop', source: 'linear', source_id: 'ENG-4711' } as const;

export const TaskSchema = Named(
  'Task',
  Type.Object(
    {
      id: Type.String({ pattern: '^[0-9]+$', readOnly: true, description: 'Task id, digits as a string (a number in paths).' }),
      context: Type.String({ description: 'Task text, trimmed.' }),
      is_completed: Type.Boolean(),
      owner: Type.String({ readOnly: true, description: 'Handle of the owner (always you).' }),
      source: Nullable(Type.String(), { description: 'The external origin, e.g. `linear`; null for a task made here.' }),
      source_id: Type.Unsafe<SourceId | null>({
        type: ['integer', 'string', 'null'],
        description: 'Id of the task in its origin, in the JSON type it was last sent with; null for a task made here.',
      }),
      session_id: Nullable(Type.Integer(), { description: 'The session it is committed to; null once that session was deleted.' }),
      created_at: Instant({ readOnly: true }),
      updated_at: Instant({ readOnly: true }),
    },
    {
      additionalProperties: false,
      description: 'A task you committed to in a session.',
      examples: [{ id: '12', ...IMPORTED, is_completed: false, owner: 'alice', session_id: 1, created_at: NOW, updated_at: NOW }],
    },
  ),
);
export type Task = Static<typeof TaskSchema>;

const taskReadOnly = ReadOnlyIgnored(READ_ONLY_FIELDS);

export const CreateTaskBody = Named(
  'TaskCreate',
  Type.Object(
    {
      context: Context,
      session_id: SessionId,
      is_completed: Type.Optional(Type.Boolean({ default: false })),
      source: Type.Optional(Nullable(Source)),
      source_id: Type.Optional(Type.Unsafe<SourceId | null>({ type: ['integer', 'string', 'null'], ...sourceIdRules })),
      ...taskReadOnly,
    },
    {
      additionalProperties: false,
      description: 'A new task. `source` and `source_id` are both null (a task made here) or both set (reusing an origin you already have is 409).',
      examples: [{ context: 'Outline the quarterly report', session_id: 1 }, { ...IMPORTED, session_id: 1 }],
    },
  ),
);
export type CreateTaskBody = Static<typeof CreateTaskBody>;

export const UpdateTaskBody = Named(
  'TaskUpdate',
  Type.Object(
    {
      context: Type.Optional(Context),
      is_completed: Type.Optional(Type.Boolean()),
      ...taskReadOnly,
      ...ReadOnlyIgnored(['source', 'source_id', 'session_id'] as const),
    },
    {
      additionalProperties: false,
      description: 'At least one of `context`, `is_completed`. A task’s origin and session are fixed once created.',
      examples: [{ is_completed: true }, { context: 'Outline the quarterly report, then send it to Sam' }],
    },
  ),
);
export type UpdateTaskBody = Static<typeof UpdateTaskBody>;

export const BulkItem = Named(
  'TaskImportItem',
  Type.Object(
    { context: Context, source: Source, source_id: SourceId, ...taskReadOnly },
    { additionalProperties: false, description: 'One task from an external origin.', examples: [IMPORTED] },
  ),
);
export type BulkItem = Static<typeof BulkItem>;

export const BulkBody = Named(
  'TaskImport',
  Type.Object(
    {
      session_id: SessionId,
      tasks: Type.Array(BulkItem, { minItems: 1, maxItems: MAX_BULK_ITEMS, description: `1–${MAX_BULK_ITEMS} tasks.` }),
      ...taskReadOnly,
    },
    {
      additionalProperties: false,
      description: 'Tasks to import into one session, upserted on (source, source_id).',
      examples: [
        {
          session_id: 1,
          tasks: [
            IMPORTED,
            { context: 'Review the pricing page copy', source: 'github', source_id: 'I_kwDOJ2d1Ns5wJtQh' },
            { context: 'Renew the domain', source: 'todoist', source_id: 7436512 },
          ],
        },
      ],
    },
  ),
);
export type BulkBody = Static<typeof BulkBody>;

export const ListTasksQuery = Type.Object(
  {
    session_id: Type.Optional(PositiveId('Only tasks committed to this session.')),
    is_completed: Type.Optional(Type.Boolean({ description: 'Only completed (`true`) or open (`false`) tasks.' })),
    limit: Type.Optional(Limit(MAX_TASK_PAGE, DEFAULT_TASK_PAGE)),
    cursor: Type.Optional(Cursor),
  },
  { additionalProperties: false },
);
export type ListTasksQuery = Static<typeof ListTasksQuery>;

export const TaskEnvelope = Envelope('TaskEnvelope', TaskSchema, 'One task.');
export const TaskList = Page('TaskList', TaskSchema, 'A page of your tasks, oldest first.');
export const BulkResult = Named(
  'TaskImportResult',
  Type.Object(
    {
      data: Type.Array(TaskSchema, { description: 'One task per request item, in request order; duplicate items show the same final task.' }),
      meta: Type.Object(
        {
          created: Type.Integer({ minimum: 0, description: 'Distinct tasks created.' }),
          updated: Type.Integer({ minimum: 0, description: 'Distinct tasks that existed and were updated.' }),
          unchanged: Type.Integer({ minimum: 0, description: 'Distinct tasks that existed and were left exactly as they were: not written, no change-feed entry or webhook.' }),
        },
        { additionalProperties: false },
      ),
    },
    { additionalProperties: false, description: 'What an import did.' },
  ),
);
