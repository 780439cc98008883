import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { locationOf } from '../../toolkit/api.js';
import { ifMatchOf } from '../../toolkit/entity-tags.js';
import { jsonResponse } from '../../toolkit/openapi.js';
import { problemResponses } from '../../toolkit/problem.schema.js';
import { bodySchemaErrors } from '../../toolkit/validation.js';
import { IdParams } from '../../toolkit/schema-helpers.js';
import {
  BulkBody,
  MAX_BULK_ITEMS,
  MAX_TASK_PAGE,
  BulkResult,
  CreateTaskBody,
  ListTasksQuery,
  TaskEnvelope,
  TaskList,
  UpdateTaskBody,
} from './tasks.schema.js';
import type { TasksService } from './tasks.service.js';

const tags = ['tasks'];
const common = [401, 429, 503] as const;

export const tasksRoutes: FastifyPluginAsyncTypebox<{ tasks: TasksService }> = async (app, { tasks }) => {
  collectionRoutes(app, tasks);
  itemRoutes(app, tasks);
};

type App = Parameters<FastifyPluginAsyncTypebox>[0];

/** `/tasks`: the page, one new task, an import. */
function collectionRoutes(app: App, tasks: TasksService): void {
  app.get(
    '/tasks',
    {
      schema: {
        tags,
        operationId: 'listTasks',
        summary: 'List your tasks',
        description:
          `Your tasks only, oldest first, optionally filtered by session and completion. Without \`limit\` a page holds up to ${MAX_TASK_PAGE} tasks; ` +
          'pass `next_cursor` back as `cursor` (same filters) until it is null.',
        querystring: ListTasksQuery,
        response: { 200: jsonResponse('A page of your tasks.', TaskList), ...problemResponses(400, 422, ...common) },
      },
    },
    (request) => tasks.list(request.user, request.query),
  );

  app.post(
    '/tasks',
    {
      config: { etag: true },
      // Schema failures go to the service, which adds the session rule: one 422 lists every broken rule.
      attachValidation: true,
      schema: {
        tags,
        operationId: 'createTask',
        summary: 'Create a task',
        description:
          'Commits you to a task in a session you can see (another session is 422 on `session_id`). ' +
          'With an origin (`source` and `source_id`) you already have a task for, 409: import it with `POST /tasks/bulk` to update it.',
        body: CreateTaskBody,
        response: { 201: jsonResponse('The task, created; `Location` names it.', TaskEnvelope), ...problemResponses(400, 409, 413, 415, 422, ...common) },
      },
    },
    async (request, reply) => {
      const task = await tasks.create(request.user, request.body, bodySchemaErrors(request));
      return reply.code(201).header('location', locationOf('tasks', task.id)).send({ data: task });
    },
  );

  app.post(
    '/tasks/bulk',
    {
      attachValidation: true,
      schema: {
        tags,
        operationId: 'importTasks',
        summary: 'Import tasks: upsert on (source, source_id), all or nothing',
        description:
          `Imports 1–${MAX_BULK_ITEMS} tasks from external origins into one session you can see, in one transaction: any bad item fails the whole ` +
          'request, listing every bad item. An origin you already have a task for updates its text (its completion and session stay); ' +
          'a new one creates a task. No duplicate is ever created, also under concurrent imports; within one request the last duplicate wins. ' +
          '`source_id` may be an integer or a string; `42` and `"42"` name the same task.',
        body: BulkBody,
        response: { 200: jsonResponse('One task per request item, and what was created and updated.', BulkResult), ...problemResponses(400, 413, 415, 422, ...common) },
      },
    },
    (request) => tasks.bulkImport(request.user, request.body, bodySchemaErrors(request)),
  );
}

/** `/tasks/{id}`: one task read, changed or deleted. */
function itemRoutes(app: App, tasks: TasksService): void {
  app.get(
    '/tasks/:id',
    {
      config: { etag: true },
      schema: {
        tags,
        operationId: 'getTask',
        summary: 'Get one of your tasks',
        description: 'Another user’s task is 404, as if it did not exist. With `If-None-Match` naming the current `ETag`: 304.',
        params: IdParams,
        response: { 200: jsonResponse('The task.', TaskEnvelope), ...problemResponses(404, ...common) },
      },
    },
    async (request) => ({ data: await tasks.get(request.user, request.params.id) }),
  );

  app.put(
    '/tasks/:id',
    {
      config: { etag: true, ifMatch: true },
      schema: {
        tags,
        operationId: 'updateTask',
        summary: 'Change a task’s text or completion',
        description: 'Sends `context`, `is_completed` or both; what is not sent keeps its value. Only your own tasks (others: 404).',
        params: IdParams,
        body: UpdateTaskBody,
        response: { 200: jsonResponse('The task as changed.', TaskEnvelope), ...problemResponses(400, 404, 413, 415, 422, ...common) },
      },
    },
    async (request, reply) => ({ data: await tasks.update(request.user, request.params.id, request.body, ifMatchOf(request, reply, TaskEnvelope)) }),
  );

  app.delete(
    '/tasks/:id',
    {
      config: { ifMatch: true },
      schema: {
        tags,
        operationId: 'deleteTask',
        summary: 'Delete a task permanently',
        description: 'The task is gone: it then answers 404. Only your own tasks (others: 404).',
        params: IdParams,
        response: { 204: { type: 'null', description: 'Deleted.' }, ...problemResponses(404, ...common) },
      },
    },
    async (request, reply) => {
      await tasks.delete(request.user, request.params.id, ifMatchOf(request, reply, TaskEnvelope));
      return reply.code(204).send(null);
    },
  );
}
