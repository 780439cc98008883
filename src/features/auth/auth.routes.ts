import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { problemResponses } from '../../toolkit/problem.schema.js';
import { MeEnvelope, UpdateMeBody } from './auth.schema.js';
import type { AuthService } from './auth.service.js';

const tags = ['auth'];

export const meRoutes: FastifyPluginAsyncTypebox<{ auth: AuthService }> = async (app, { auth }) => {
  app.get(
    '/me',
    { schema: { tags, summary: 'Who the token belongs to', response: { 200: MeEnvelope, ...problemResponses(401, 429, 503) } } },
    (request) => ({ data: auth.me(request.user) }),
  );

  app.put(
    '/me',
    {
      schema: {
        tags,
        summary: 'Change your home time zone',
        body: UpdateMeBody,
        response: { 200: MeEnvelope, ...problemResponses(400, 401, 413, 415, 422, 429, 503) },
      },
    },
    async (request) => ({ data: await auth.updateMe(request.user, request.body) }),
  );
};
