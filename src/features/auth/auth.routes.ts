import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { jsonResponse } from '../../toolkit/openapi.js';
import { problemResponses } from '../../toolkit/problem.schema.js';
import { MeEnvelope, UpdateMeBody } from './auth.schema.js';
import type { AuthService } from './auth.service.js';

const tags = ['auth'];

export const meRoutes: FastifyPluginAsyncTypebox<{ auth: AuthService }> = async (app, { auth }) => {
  app.get(
    '/me',
    {
      schema: {
        tags,
        operationId: 'getMe',
        summary: 'Who the token belongs to',
        description: 'The handle, organizations, home time zone and reminders of the user whose bearer token authenticated this request.',
        response: { 200: jsonResponse('You.', MeEnvelope), ...problemResponses(401, 429, 503) },
      },
    },
    async (request) => ({ data: await auth.me(request.user) }),
  );

  app.put(
    '/me',
    {
      schema: {
        tags,
        operationId: 'updateMe',
        summary: 'Change your home time zone and reminders',
        description:
          'Sessions you create without `timezone` take place in your home time zone; sessions you already created keep theirs. ' +
          'An unknown zone is 422. `handle` and `org_ids` are the administrator’s to change (`npx focus users add`).',
        body: UpdateMeBody,
        response: { 200: jsonResponse('You, as changed.', MeEnvelope), ...problemResponses(400, 401, 413, 415, 422, 429, 503) },
      },
    },
    async (request) => ({ data: await auth.updateMe(request.user, request.body) }),
  );
};
