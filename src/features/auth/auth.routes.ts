import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { problemResponses } from '../../toolkit/problem.schema.js';

const Me = Type.Object({
  data: Type.Object({
    handle: Type.String(),
    org_ids: Type.Array(Type.Integer()),
  }),
});

export const meRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/me',
    { schema: { tags: ['auth'], summary: 'Who the token belongs to', response: { 200: Me, ...problemResponses(401, 429, 503) } } },
    (request) => ({ data: { handle: request.user.handle, org_ids: request.user.orgIds } }),
  );
};
