import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Named, jsonResponse } from '../../toolkit/openapi.js';
import { problemResponses } from '../../toolkit/problem.schema.js';

const Me = Named(
  'MeEnvelope',
  Type.Object(
    {
      data: Named(
        'Me',
        Type.Object(
          {
            handle: Type.String({ description: 'Your handle.', examples: ['alice'] }),
            org_ids: Type.Array(Type.Integer(), { description: 'The organizations you belong to.', examples: [[1, 2]] }),
          },
          { additionalProperties: false, description: 'The user a token belongs to.' },
        ),
      ),
    },
    { additionalProperties: false },
  ),
);

export const meRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/me',
    {
      schema: {
        tags: ['auth'],
        operationId: 'getMe',
        summary: 'Who the token belongs to',
        description: 'The handle and organizations of the user whose bearer token authenticated this request.',
        response: { 200: jsonResponse('You.', Me), ...problemResponses(401, 429, 503) },
      },
    },
    (request) => ({ data: { handle: request.user.handle, org_ids: request.user.orgIds } }),
  );
};
