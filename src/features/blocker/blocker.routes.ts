import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Named, jsonResponse } from '../../toolkit/openapi.js';
import { problemResponses } from '../../toolkit/problem.schema.js';
import { BLOCKER_CATEGORIES, BLOCKER_CATEGORY_IDS } from './blocker.categories.js';

const Category = Named(
  'BlockerCategory',
  Type.Object(
    {
      id: Type.String({ description: 'What `website_blocker.category` names.', examples: ['social'] }),
      name: Type.String({ examples: ['Social media'] }),
      domains: Type.Array(Type.String(), { description: 'The domains it blocks; each covers its subdomains.', examples: [['facebook.com', 'instagram.com']] }),
    },
    { additionalProperties: false, description: 'A preset website-blocker category.' },
  ),
);

const CategoryList = Named(
  'BlockerCategoryList',
  Type.Object({ data: Type.Array(Category) }, { additionalProperties: false, description: 'Every preset category, in a fixed order.' }),
);

// The same for every caller while the process runs.
const LIST = { data: BLOCKER_CATEGORY_IDS.map((id) => ({ id, name: BLOCKER_CATEGORIES[id].name, domains: [...BLOCKER_CATEGORIES[id].domains] })) };

export const blockerRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/blocker/categories',
    {
      schema: {
        tags: ['sessions'],
        operationId: 'listBlockerCategories',
        summary: 'The preset website-blocker categories',
        description:
          'The categories a session’s `website_blocker.category` may name, each with the domains it blocks (a domain covers its subdomains), ' +
          'so that every blocking client enforces the same thing. Another name is a 422. `GET /me/now` expands the active ones in `website_blocker.domains`.',
        response: { 200: jsonResponse('The categories.', CategoryList), ...problemResponses(401, 429, 503) },
      },
    },
    () => LIST,
  );
};
