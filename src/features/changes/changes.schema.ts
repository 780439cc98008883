import { type Static, Type } from 'typebox';
import { Named } from '../../toolkit/openapi.js';
import { Cursor, Instant, Limit, Nullable, StringEnum } from '../../toolkit/schema-helpers.js';
import { SessionSchema } from '../sessions/sessions.schema.js';
import { TaskSchema } from '../tasks/tasks.schema.js';

export const MAX_CHANGES_PAGE = 500;
export const DEFAULT_CHANGES_PAGE = 100;

const AT = '2026-12-01T08:00:00.000Z';

export const ChangeEntrySchema = Named(
  'ChangeEntry',
  Type.Object(
    {
      type: StringEnum(['session', 'task'] as const, { description: 'What changed.' }),
      id: Type.String({ pattern: '^[0-9]+$', description: 'The session’s or task’s id, digits as a string.' }),
      deleted: Type.Boolean({ description: 'True: the record was deleted, or you can no longer see it; drop it. `record` is then null.' }),
      record: Nullable(Type.Union([SessionSchema, TaskSchema]), {
        description: 'The record in its current state (as `GET /sessions/{id}` or `GET /tasks/{id}` answers); null when `deleted`.',
      }),
      changed_at: Instant({ description: 'When it last changed (in a full sync: the record’s `updated_at`).' }),
      occurrence_date: Type.Optional(
        Type.String({ format: 'date', description: 'An edit of one occurrence of a series (`PUT /sessions/{id}?date=`): that occurrence, and `record` is it as `GET /sessions/{id}?date=` answers.' }),
      ),
    },
    {
      additionalProperties: false,
      description: 'One record that changed: an upsert with its current state, or a deletion.',
      examples: [
        { type: 'task', id: '12', deleted: true, record: null, changed_at: AT },
        {
          type: 'task',
          id: '13',
          deleted: false,
          record: { id: '13', context: 'Renew the domain', is_completed: true, owner: 'alice', source: null, source_id: null, session_id: 1, created_at: AT, updated_at: AT },
          changed_at: AT,
        },
      ],
    },
  ),
);
export type ChangeEntry = Static<typeof ChangeEntrySchema>;

export const ChangePage = Named(
  'ChangePage',
  Type.Object(
    {
      data: Type.Array(ChangeEntrySchema),
      next_cursor: Type.String({ description: 'Always set: pass it back as `cursor` for what changed next; an empty `data` means up to date.' }),
    },
    {
      additionalProperties: false,
      description: 'A page of the change feed: a full sync (without `cursor`), or what changed since the cursor, in commit order.',
      examples: [{ data: [{ type: 'task', id: '12', deleted: true, record: null, changed_at: AT }], next_cursor: 'WzQyLDIsIiIsMCwxNzY0NTc2MDAwMDAwXQ' }],
    },
  ),
);

export const ChangesQuery = Type.Object(
  {
    cursor: Type.Optional(Cursor),
    limit: Type.Optional(Limit(MAX_CHANGES_PAGE, DEFAULT_CHANGES_PAGE)),
  },
  { additionalProperties: false },
);
export type ChangesQuery = Static<typeof ChangesQuery>;
