import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import fp from 'fastify-plugin';
import { SessionSchema } from '../features/sessions/sessions.schema.js';
import { TaskSchema } from '../features/tasks/tasks.schema.js';
import { API_PREFIX } from '../toolkit/api.js';
import { ProblemSchema, problemResponses } from '../toolkit/problem.schema.js';

/**
 * The OpenAPI 3.1 document, generated from the schemas every route validates with, at
 * `/api/v1/openapi.json`, and the docs page at `/docs`. Registered before the routes so
 * that it sees each one as it is added.
 */
export const openapiPlugin = fp(
  async (app) => {
    for (const schema of [ProblemSchema, TaskSchema, SessionSchema]) app.addSchema(schema);

    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Focus API',
          version: '1.0.0',
          description: 'Timed focus sessions and the tasks people commit to in them. Errors are RFC 9457 problem+json.',
        },
        servers: [{ url: '/' }],
        components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An `fst_` token from `npx focus tokens issue`.' } } },
        security: [{ bearer: [] }],
        tags: [
          { name: 'sessions', description: 'Focus sessions, recurrence and participation' },
          { name: 'tasks', description: 'Tasks and bulk import' },
          { name: 'auth', description: 'The authenticated user' },
          { name: 'operations', description: 'Health, readiness and this document' },
        ],
      },
      refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    });
    // The page reads the document from its documented address (the plugin's default is /docs/json).
    await app.register(swaggerUi, {
      routePrefix: '/docs',
      uiConfig: { deepLinking: true, urls: [{ url: `${API_PREFIX}/openapi.json`, name: 'Focus API' }] },
    });

    app.get(
      `${API_PREFIX}/openapi.json`,
      {
        schema: {
          tags: ['operations'],
          summary: 'This OpenAPI 3.1 document',
          security: [],
          response: {
            200: {
              description: 'The OpenAPI 3.1 document of this API.',
              type: 'object',
              additionalProperties: true,
            },
            ...problemResponses(429),
          },
        },
      },
      // Spread: an object literal type, which the response schema's index signature accepts.
      () => ({ ...app.swagger() }),
    );
  },
  { name: 'focus-openapi' },
);
