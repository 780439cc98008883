import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { locationOf } from '../../toolkit/api.js';
import { ifMatchOf } from '../../toolkit/entity-tags.js';
import { problemResponses } from '../../toolkit/problem.schema.js';
import { IdParams } from '../../toolkit/schema-helpers.js';
import {
  BulkBody,
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
  app.get(
    '/tasks',
    {
      schema: {
        tags,
        summary: 'List your tasks',
        querystring: ListTasksQuery,
        response: { 200: TaskList, ...problemResponses(400, 422, ...common) },
      },
    },
    (request) => tasks.list(request.user, request.query),
  );

  app.post(
    '/tasks',
    {
      config: { etag: true },
      schema: {
        tags,
        summary: 'Create a task',
        body: CreateTaskBody,
        response: { 201: TaskEnvelope, ...problemResponses(400, 409, 413, 415, 422, ...common) },
      },
    },
    async (request, reply) => {
      const task = await tasks.create(request.user, request.body);
      return reply.code(201).header('location', locationOf('tasks', task.id)).send({ data: task });
    },
  );

  app.post(
    '/tasks/bulk',
    {
      schema: {
        tags,
        summary: 'Import tasks: upsert on (source, source_id), all or nothing',
        body: BulkBody,
        response: { 200: BulkResult, ...problemResponses(400, 413, 415, 422, ...common) },
      },
    },
    (request) => tasks.bulkImport(request.user, request.body),
  );

  app.get(
    '/tasks/:id',
    {
      config: { etag: true },
      schema: {
        tags,
        summary: 'Get one of your tasks',
        params: IdParams,
        response: { 200: TaskEnvelope, ...problemResponses(404, ...common) },
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
        summary: 'Change a task’s text or completion',
        params: IdParams,
        body: UpdateTaskBody,
        response: { 200: TaskEnvelope, ...problemResponses(400, 404, 413, 415, 422, ...common) },
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
        summary: 'Delete a task permanently',
        params: IdParams,
        response: { 204: { type: 'null', description: 'Deleted.' }, ...problemResponses(404, ...common) },
      },
    },
    async (request, reply) => {
      await tasks.delete(request.user, request.params.id, ifMatchOf(request, reply, TaskEnvelope));
      return reply.code(204).send(null);
    },
  );
};
