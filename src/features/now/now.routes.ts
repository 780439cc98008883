import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { jsonResponse } from '../../toolkit/openapi.js';
import { problemResponses } from '../../toolkit/problem.schema.js';
import { NowEnvelope } from './now.schema.js';
import type { NowService } from './now.service.js';

export const nowRoutes: FastifyPluginAsyncTypebox<{ now: NowService }> = async (app, { now }) => {
  app.get(
    '/me/now',
    {
      schema: {
        tags: ['sessions'],
        operationId: 'getNow',
        summary: 'What runs now, what comes next, and what to block',
        description:
          'Over the sessions you created, collaborate on or joined (every occurrence of a series you joined once): `active` are the occurrences ' +
          'running now (starts_at ≤ now < ends_at), `next` the first that starts later (however far ahead), each as a dated listing shows it. ' +
          '`website_blocker` and `snooze_apps` are the union of the active ones’ enabled blockers and snoozes: what a blocking client enforces ' +
          'this minute (`null` and `{}` when nothing runs). Poll it each minute, or when `GET /events` says a session started or ended.',
        response: { 200: jsonResponse('Now.', NowEnvelope), ...problemResponses(401, 429, 503) },
      },
    },
    (request) => now.now(request.user),
  );
};
