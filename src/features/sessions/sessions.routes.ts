import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { PARTICIPATION_ACTIONS } from '../../domain/vocabulary.js';
import { locationOf } from '../../toolkit/api.js';
import { ifMatchOf } from '../../toolkit/entity-tags.js';
import { jsonResponse } from '../../toolkit/openapi.js';
import { problemResponses } from '../../toolkit/problem.schema.js';
import { IdParams } from '../../toolkit/schema-helpers.js';
import { sendSerialized } from '../../toolkit/serialization.js';
import { bodySchemaErrors } from '../../toolkit/validation.js';
import { CreateSessionBody, UpdateSessionBody } from './sessions.schema.js';
import { DeleteSessionQuery, GetSessionQuery, UpdateSessionQuery, ListSessionsQuery, OccurrenceList, OccurrencesQuery, ParticipationEnvelope, ParticipationQuery, SessionEnvelope, SessionList } from './sessions.route-schema.js';
import type { SessionsService } from './sessions.service.js';

const tags = ['sessions'];
const common = [401, 429, 503] as const;

type Options = { sessions: SessionsService };
type App = Parameters<FastifyPluginAsyncTypebox<Options>>[0];

export const sessionsRoutes: FastifyPluginAsyncTypebox<Options> = async (app, { sessions }) => {
  readRoutes(app, sessions);
  writeRoutes(app, sessions);
  participationRoutes(app, sessions);
};

/** Listing, reading one, and its occurrences. */
function readRoutes(app: App, sessions: SessionsService) {
  app.get(
    '/sessions',
    {
      schema: {
        tags,
        operationId: 'listSessions',
        summary: 'List visible sessions of your organizations',
        description:
          'With `date` or `day_start`/`day_ends`, a recurring session appears once per occurrence in the range. Ordered by `starts_at`, then `id`. ' +
          'Every filter value is validated (a bad one is 422, never ignored). Pass `next_cursor` back as `cursor` until it is null.',
        querystring: ListSessionsQuery,
        response: { 200: jsonResponse('A page of sessions.', SessionList), ...problemResponses(400, 422, ...common) },
      },
    },
    async (request, reply) => sendSerialized(reply, await sessions.list(request.user, request.query)),
  );

  app.get(
    '/sessions/:id',
    {
      config: { etag: true },
      schema: {
        tags,
        operationId: 'getSession',
        summary: 'Get a session with your participation',
        description:
          'Without `date`: the session as stored; for a series, `participation` and `participants_count` are those of its next occurrence. ' +
          'With `date` (an occurrence of a series, or a one-off session’s own day): that occurrence, with its `occurrence_date`, `starts_at`/`ends_at`, `status`, participants and your participation.',
        params: IdParams,
        querystring: GetSessionQuery,
        response: { 200: jsonResponse('The session, with your participation.', SessionEnvelope), ...problemResponses(404, 422, ...common) },
      },
    },
    async (request) => ({ data: await sessions.get(request.user, request.params.id, request.query.date) }),
  );

  app.get(
    '/sessions/:id/occurrences',
    {
      schema: {
        tags,
        operationId: 'listSessionOccurrences',
        summary: 'Occurrences of a session in a date range',
        description: 'The local dates and UTC instants of the occurrences from `from` to `to` (inclusive, at most 366 days); a one-off session has one.',
        params: IdParams,
        querystring: OccurrencesQuery,
        response: { 200: jsonResponse('The occurrences in the range.', OccurrenceList), ...problemResponses(404, 422, ...common) },
      },
    },
    (request) => sessions.occurrences(request.user, request.params.id, request.query.from, request.query.to),
  );
}

/** Creating, changing and deleting. */
function writeRoutes(app: App, sessions: SessionsService) {
  app.post(
    '/sessions',
    {
      config: { etag: true },
      attachValidation: true,
      schema: {
        tags,
        operationId: 'createSession',
        summary: 'Create a session (you are its host)',
        description:
          'Creates a one-off session or a recurring series in an organization you belong to (another org is 403). ' +
          'One 422 lists every broken rule, including those a schema cannot express (a real time zone, `occurrence` for a series, collaborators in the org).',
        body: CreateSessionBody,
        response: { 201: jsonResponse('The session, created; `Location` names it.', SessionEnvelope), ...problemResponses(400, 403, 413, 415, 422, ...common) },
      },
    },
    async (request, reply) => {
      const session = await sessions.create(request.user, request.body, bodySchemaErrors(request));
      return reply.code(201).header('location', locationOf('sessions', session.id)).send({ data: session });
    },
  );

  app.put(
    '/sessions/:id',
    {
      config: { etag: true, ifMatch: true },
      attachValidation: true,
      schema: {
        tags,
        operationId: 'updateSession',
        summary: 'Change a session (creator only)',
        description:
          'Fields sent replace the stored ones, fields not sent keep their values, and the merged session must pass every create rule. ' +
          '`status` only moves forward (backward is 409). Others who can see the session get 403. ' +
          'With `date`, only that occurrence changes (`name`, `time`, `duration`, `schedule` to move it, and the blocker and snooze fields; any other field is 422): ' +
          'the answer is the occurrence as `GET ?date=` shows it, and later series edits change only what it did not set. ' +
          'With `date` and `scope=following`, the series ends the day before and a new series (`split_from`) takes that day on, with the body applied: `201`.',
        params: IdParams,
        querystring: UpdateSessionQuery,
        body: UpdateSessionBody,
        response: {
          200: jsonResponse('The session (or the occurrence) as changed.', SessionEnvelope),
          201: jsonResponse('The new series a `scope=following` edit split off; `Location` names it.', SessionEnvelope),
          ...problemResponses(400, 403, 404, 409, 413, 415, 422, ...common),
        },
      },
    },
    async (request, reply) => {
      const precondition = ifMatchOf(request, reply, SessionEnvelope);
      const { session, created } = await sessions.updateIn(request.user, request.params.id, request.query, request.body, bodySchemaErrors(request), precondition);
      if (created) reply.code(201).header('location', locationOf('sessions', session.id));
      return { data: session };
    },
  );

  app.delete(
    '/sessions/:id',
    {
      config: { ifMatch: true },
      schema: {
        tags,
        operationId: 'deleteSession',
        summary: 'Delete a session, one occurrence, or the rest of a series (creator only)',
        description:
          '`scope=series` (default) removes the session; tasks committed to it are kept with `session_id` null. For a series, ' +
          '`scope=occurrence` removes the occurrence on `date` and `scope=following` ends the series before `date`; ' +
          'either removes the whole session when no occurrence would be left.',
        params: IdParams,
        querystring: DeleteSessionQuery,
        response: { 204: { type: 'null', description: 'Deleted.' }, ...problemResponses(403, 404, 409, 422, ...common) },
      },
    },
    async (request, reply) => {
      await sessions.delete(request.user, request.params.id, request.query, ifMatchOf(request, reply, SessionEnvelope));
      return reply.code(204).send(null);
    },
  );
}

/** Joining, leaving and completing an occurrence. */
function participationRoutes(app: App, sessions: SessionsService) {
  for (const action of PARTICIPATION_ACTIONS) {
    app.post(
      `/sessions/:id/${action}`,
      {
        // The tag of the participation body answered (not of the session, which GET tags).
        config: { etag: true },
        schema: {
          tags,
          operationId: `${action}Session`,
          summary: { join: 'Join a session (idempotent)', leave: 'Leave a session', complete: 'Mark your participation complete' }[action],
          description: {
            join: 'Joins the session (for a series: the occurrence on `date`, default the next one). Joining twice changes nothing; a completed session or occurrence is 409.',
            leave: 'Removes your participation; leaving twice changes nothing. The host cannot leave, nor can you after completing (409).',
            complete: 'Marks your participation completed (409 before you joined). When the host completes, the session (or the occurrence) counts as completed.',
          }[action],
          params: IdParams,
          querystring: ParticipationQuery,
          response: { 200: jsonResponse('Your participation afterwards.', ParticipationEnvelope), ...problemResponses(404, 409, 422, ...common) },
        },
      },
      (request) => sessions.participate(request.user, request.params.id, action, request.query.date),
    );
  }
}
