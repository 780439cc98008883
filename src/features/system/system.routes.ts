import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { unavailable } from '../../toolkit/errors.js';
import { problemResponses } from '../../toolkit/problem.schema.js';
import type { Storage } from '../../storage/database.js';

const Status = Type.Object({ status: Type.String() });

export const systemRoutes: FastifyPluginAsyncTypebox<{ storage: Storage }> = async (app, { storage }) => {
  app.get(
    '/healthz',
    { schema: { tags: ['operations'], summary: 'The process is up', security: [], response: { 200: Status } } },
    () => ({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['operations'],
        summary: 'The database answers',
        security: [],
        response: { 200: Status, ...problemResponses(503) },
      },
    },
    async (request) => {
      try {
        await storage.ping();
      } catch (error) {
        request.log.warn({ err: error }, 'readiness check failed');
        throw unavailable();
      }
      return { status: 'ready' };
    },
  );
};
