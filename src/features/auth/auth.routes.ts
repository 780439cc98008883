import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Named, jsonResponse } from '../../toolkit/openapi.js';
import { problemResponses } from '../../toolkit/problem.schema.js';
import { Envelope } from '../../toolkit/schema-helpers.js';

const Me = Envelope(
  'MeEnvelope',
  Named(
    'Me',
    Type.Object(
      {
        handle: Type.String({ description: 'Your handle.', examples: ['alice'] }),
        org_ids: Type.Array(Type.Integer(), { description: 'The organizations you belong to.', examples: [[1, 2]] }),
      },
      { additionalProperties: false, description: 'The user a token belongs to.' },
    ),
  ),
  'The user the token belongs to.',
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
