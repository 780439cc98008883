import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ErrorObject } from 'ajv';
import type { FastifyRequest } from 'fastify';
import { locationOf } from '../../toolkit/api.js';
import { ifMatchOf } from '../../toolkit/entity-tags.js';
import type { FieldError } from '../../toolkit/errors.js';
import { problemResponses } from '../../toolkit/problem.schema.js';
import { IdParams } from '../../toolkit/schema-helpers.js';
import { toFieldErrors } from '../../toolkit/validation.js';
import {
  CreateSessionBody,
  DeleteSessionQuery,
  GetSessionQuery,
  ListSessionsQuery,
  OccurrenceList,
  OccurrencesQuery,
  ParticipationEnvelope,
  ParticipationQuery,
  SessionEnvelope,
  SessionList,
  UpdateSessionBody,
} from './sessions.schema.js';
import type { SessionsService } from './sessions.service.js';

const tags = ['sessions'];
const common = [401, 429, 503] as const;

/**
 * Create and update take their schema failures in hand (`attachValidation`) so that the
 * service can add the rules a schema cannot express and answer one 422 listing every
 * bad field. Anything but a body failure (a bad path id) is rethrown as usual.
 */
function bodySchemaErrors(request: FastifyRequest): FieldError[] {
  const error = request.validationError;
  if (error === undefined) return [];
  if (error.validationContext !== 'body') throw error;
  // Fastify types the attached error's details as any; they are Ajv's errors.
  const issues: unknown = error.validation;
  return toFieldErrors(issues as ErrorObject[]);
}

export const sessionsRoutes: FastifyPluginAsyncTypebox<{ sessions: SessionsService }> = async (app, { sessions }) => {
  app.get(
    '/sessions',
    {
      schema: {
        tags,
        summary: 'List visible sessions of your organizations',
        description:
          'With `date` or `day_start`/`day_ends`, a recurring session appears once per occurrence in the range. Ordered by `starts_at`, then `id`.',
        querystring: ListSessionsQuery,
        response: { 200: SessionList, ...problemResponses(400, 422, ...common) },
      },
    },
    (request) => sessions.list(request.user, request.query),
  );

  app.post(
    '/sessions',
    {
      config: { etag: true },
      attachValidation: true,
      schema: {
        tags,
        summary: 'Create a session (you are its host)',
        body: CreateSessionBody,
        response: { 201: SessionEnvelope, ...problemResponses(400, 403, 413, 415, 422, ...common) },
      },
    },
    async (request, reply) => {
      const session = await sessions.create(request.user, request.body, bodySchemaErrors(request));
      return reply.code(201).header('location', locationOf('sessions', session.id)).send({ data: session });
    },
  );

  app.get(
    '/sessions/:id',
    {
      config: { etag: true },
      schema: {
        tags,
        summary: 'Get a session with your participation',
        description:
          'Without `date`: the session as stored; for a series, `participation` and `participants_count` are those of its next occurrence. ' +
          'With `date` (an occurrence of a series): that occurrence, with its `occurrence_date`, `starts_at`/`ends_at`, `status`, participants and your participation.',
        params: IdParams,
        querystring: GetSessionQuery,
        response: { 200: SessionEnvelope, ...problemResponses(404, 422, ...common) },
      },
    },
    async (request) => ({ data: await sessions.get(request.user, request.params.id, request.query.date) }),
  );

  app.put(
    '/sessions/:id',
    {
      config: { etag: true, ifMatch: true },
      attachValidation: true,
      schema: {
        tags,
        summary: 'Change a session (creator only)',
        params: IdParams,
        body: UpdateSessionBody,
        response: { 200: SessionEnvelope, ...problemResponses(400, 403, 404, 409, 413, 415, 422, ...common) },
      },
    },
    async (request, reply) => ({
      data: await sessions.update(request.user, request.params.id, request.body, bodySchemaErrors(request), ifMatchOf(request, reply, SessionEnvelope)),
    }),
  );

  app.delete(
    '/sessions/:id',
    {
      config: { ifMatch: true },
      schema: {
        tags,
        summary: 'Delete a session, one occurrence, or the rest of a series (creator only)',
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

  app.get(
    '/sessions/:id/occurrences',
    {
      schema: {
        tags,
        summary: 'Occurrences of a session in a date range',
        params: IdParams,
        querystring: OccurrencesQuery,
        response: { 200: OccurrenceList, ...problemResponses(404, 422, ...common) },
      },
    },
    (request) => sessions.occurrences(request.user, request.params.id, request.query.from, request.query.to),
  );

  for (const action of ['join', 'leave', 'complete'] as const) {
    app.post(
      `/sessions/:id/${action}`,
      {
        // The tag of the participation body answered (not of the session, which GET tags).
        config: { etag: true },
        schema: {
          tags,
          summary: { join: 'Join a session (idempotent)', leave: 'Leave a session', complete: 'Mark your participation complete' }[action],
          params: IdParams,
          querystring: ParticipationQuery,
          response: { 200: ParticipationEnvelope, ...problemResponses(404, 409, 422, ...common) },
        },
      },
      (request) => sessions.participate(request.user, request.params.id, action, request.query.date),
    );
  }
};
