import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { unavailable } from '../../toolkit/errors.js';
import { Named, jsonResponse } from '../../toolkit/openapi.js';
import { problemResponses } from '../../toolkit/problem.schema.js';
import type { Storage } from '../../storage/database.js';

const Status = Named(
  'HealthStatus',
  Type.Object({ status: Type.String({ examples: ['ok'] }) }, { additionalProperties: false, description: 'A probe’s answer.' }),
);

export const systemRoutes: FastifyPluginAsyncTypebox<{ storage: Storage }> = async (app, { storage }) => {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['operations'],
        operationId: 'getHealth',
        summary: 'The process is up',
        description: 'Liveness: answers `{"status":"ok"}` while the process serves HTTP, whatever the database does. No token, no rate limit.',
        security: [],
        response: { 200: jsonResponse('The process is up.', Status) },
      },
    },
    () => ({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['operations'],
        operationId: 'getReadiness',
        summary: 'The database answers',
        description: 'Readiness: `{"status":"ready"}` when the database answers a trivial query, else 503. No token, no rate limit.',
        security: [],
        response: { 200: jsonResponse('Ready to serve.', Status), ...problemResponses(503) },
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
