import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { jsonResponse } from '../../toolkit/openapi.js';
import { problemResponses } from '../../toolkit/problem.schema.js';
import { IdParams } from '../../toolkit/schema-helpers.js';
import type { StatsReader } from './stats.reader.js';
import { MAX_STATS_DAYS, OrgStatsEnvelope, StatsEnvelope, StatsQuery } from './stats.schema.js';

const tags = ['stats'];
const common = [400, 401, 422, 429, 503] as const;
const counting =
  'An occurrence counts in the bucket of its local start day: joined (any participation, a host’s completed own included), and when you ' +
  'completed it (host or participant) completed, with its duration in `focused_minutes`. A task counts in the bucket of its completion. ' +
  `Local days are in your home zone (\`GET /me\`); at most ${MAX_STATS_DAYS} days (422), \`from\` after \`to\` is 422; default the 28 days ending today, by day.`;

export const statsRoutes: FastifyPluginAsyncTypebox<{ stats: StatsReader }> = async (app, { stats }) => {
  app.get(
    '/me/stats',
    {
      schema: {
        tags,
        operationId: 'getMyStats',
        summary: 'Your focus statistics: minutes, sessions, tasks, streaks',
        description: `${counting} Streaks: runs of consecutive local days with a completed occurrence; the current one is counted to today (a run that reached yesterday still counts), the longest over all time.`,
        querystring: StatsQuery,
        response: { 200: jsonResponse('Your statistics.', StatsEnvelope), ...problemResponses(...common) },
      },
    },
    (request) => stats.mine(request.user, request.query),
  );

  app.get(
    '/orgs/:id/stats',
    {
      schema: {
        tags,
        operationId: 'getOrgStats',
        summary: 'An org’s focus statistics, summed over its members',
        description: `Members only (404 otherwise). The same buckets summed over the org’s members, with \`active_members\` per bucket; no per-member breakdown. ${counting}`,
        params: IdParams,
        querystring: StatsQuery,
        response: { 200: jsonResponse('The org’s statistics.', OrgStatsEnvelope), ...problemResponses(404, ...common) },
      },
    },
    (request) => stats.org(request.user, request.params.id, request.query),
  );
};
