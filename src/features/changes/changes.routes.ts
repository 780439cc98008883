import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { jsonResponse } from '../../toolkit/openapi.js';
import { problemResponses } from '../../toolkit/problem.schema.js';
import { ChangePage, ChangesQuery, DEFAULT_CHANGES_PAGE, MAX_CHANGES_PAGE } from './changes.schema.js';
import type { ChangesService } from './changes.service.js';

export const changesRoutes: FastifyPluginAsyncTypebox<{ changes: ChangesService }> = async (app, { changes }) => {
  app.get(
    '/changes',
    {
      schema: {
        tags: ['sync'],
        operationId: 'listChanges',
        summary: 'Sync: everything, then what changed since',
        description:
          'Without `cursor`: a full sync, every session you can see and every task of yours as upserts, page after page. ' +
          'With the `next_cursor` of the last page: what changed since, in commit order, each record at most once per page in its current state; ' +
          'a session deleted or no longer visible to you comes as `deleted: true` with `record: null` (only if you could see it before). ' +
          `\`next_cursor\` is always set: poll with it again later; an empty \`data\` means you are up to date. Pages hold up to \`limit\` entries (1–${MAX_CHANGES_PAGE}, ` +
          `default ${DEFAULT_CHANGES_PAGE}) and stop at about 2 MiB. A cursor is valid for 7 days; an older one is \`410 sync-expired\`: sync in full again.`,
        querystring: ChangesQuery,
        response: { 200: jsonResponse('A page of changes and the cursor after it.', ChangePage), ...problemResponses(400, 401, 410, 422, 429, 503) },
      },
    },
    (request) => changes.page(request.user, request.query),
  );
};
