import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { locationOf } from '../../toolkit/api.js';
import { notFound } from '../../toolkit/errors.js';
import { jsonResponse } from '../../toolkit/openapi.js';
import { problemResponses } from '../../toolkit/problem.schema.js';
import { IdParams } from '../../toolkit/schema-helpers.js';
import { CalendarFeedList, CreateCalendarFeedBody, CreatedCalendarFeedEnvelope, ICalendarText, IcalParams, MAX_FEEDS_PER_USER, MAX_FEED_EVENTS } from './calendar.schema.js';
import type { CalendarService, FeedOfSecret } from './calendar.service.js';

const tags = ['calendar'];
const common = [401, 429, 503] as const;

/** Managing feeds: under the API prefix, with a bearer token. */
export const calendarFeedsRoutes: FastifyPluginAsyncTypebox<{ calendar: CalendarService }> = async (app, { calendar }) => {
  app.post(
    '/calendar-feeds',
    {
      // The body is optional (contract section 8): no body at all means `{}`.
      preValidation: (request, _reply, done) => {
        // No body; a JSON `null` is a body, and not an object (422).
        if (request.body === undefined) request.body = {};
        done();
      },
      schema: {
        tags,
        operationId: 'createCalendarFeed',
        summary: 'Create a calendar feed (its URL is shown once)',
        description:
          'A secret URL that serves your sessions as iCalendar, for a calendar app to subscribe to. The secret is in `url` in this answer only ' +
          `(it is stored hashed), and with PUBLIC_URL set also as \`webcal_url\`; lost, delete the feed and create another. The body may be left out. At most ${MAX_FEEDS_PER_USER} feeds per user: one more is 409.`,
        body: CreateCalendarFeedBody,
        response: { 201: jsonResponse('The feed, with its secret URL.', CreatedCalendarFeedEnvelope), ...problemResponses(400, 409, 413, 415, 422, ...common) },
      },
    },
    async (request, reply) => {
      const feed = await calendar.create(request.user, request.body);
      // The feed as a resource (what DELETE acts on); its secret URL is in the body only.
      return reply.code(201).header('location', locationOf('calendar-feeds', feed.id)).send({ data: feed });
    },
  );

  app.get(
    '/calendar-feeds',
    {
      schema: {
        tags,
        operationId: 'listCalendarFeeds',
        summary: 'List your calendar feeds (without their secrets)',
        description: `Oldest first; at most ${MAX_FEEDS_PER_USER}, so one answer holds them all.`,
        response: { 200: jsonResponse('Your feeds.', CalendarFeedList), ...problemResponses(...common) },
      },
    },
    (request) => calendar.list(request.user),
  );

  app.delete(
    '/calendar-feeds/:id',
    {
      schema: {
        tags,
        operationId: 'deleteCalendarFeed',
        summary: 'Revoke a calendar feed',
        description: 'Its URL answers 404 from now on. A feed that is not yours is 404, like one that does not exist.',
        params: IdParams,
        response: { 204: { type: 'null', description: 'Revoked.' }, ...problemResponses(404, 422, ...common) },
      },
    },
    async (request, reply) => {
      await calendar.revoke(request.user, request.params.id);
      return reply.code(204).send(null);
    },
  );
};

/** The feed itself: outside the API prefix, no bearer token (the secret in the path is the credential). */
export const icalRoutes: FastifyPluginAsyncTypebox<{ calendar: CalendarService }> = async (app, { calendar }) => {
  const found = new WeakMap<FastifyRequest, FeedOfSecret>();
  app.get(
    '/ical/:file',
    {
      // A known secret is counted on a budget of its own (the rate limiter reads rateLimitSubject
      // after this hook); an unknown one on the client address, as any anonymous request.
      config: { etag: true, rateLimitSubject: true },
      onRequest: async (request) => {
        const feed = await calendar.feedOf(request.params.file);
        request.rateLimitSubject = feed.rateKey;
        found.set(request, feed);
      },
      schema: {
        tags,
        operationId: 'getCalendarFeedIcs',
        summary: 'A calendar feed as iCalendar (RFC 5545)',
        description:
          'The URL a calendar app subscribes to: `/ical/<secret>.ics`, as created. No bearer token; each feed has a rate limit of its own ' +
          '(the same number of requests per minute as a token), and an unknown secret counts on the client address. ' +
          'One VEVENT per session you created, collaborate on or joined and can still see: UID `session-<id>@focus`, DTSTART with TZID and a ' +
          'VTIMEZONE per zone, DTEND, SUMMARY, DESCRIPTION (type, duration, blockers; the session’s link with PUBLIC_URL), URL (that link, with PUBLIC_URL), ' +
          'RRULE and EXDATE (removed occurrences) for a series, STATUS, LAST-MODIFIED and SEQUENCE. ' +
          `At most ${MAX_FEED_EVENTS} sessions, the most recently changed; a longer feed says so in \`X-Focus-Feed-Truncated: true\`. ` +
          'An unknown or revoked secret is 404, the same answer whatever the secret.',
        security: [],
        params: IcalParams,
        response: {
          200: {
            description: 'The feed.',
            headers: { 'X-Focus-Feed-Truncated': { type: 'string', description: '`true` when the feed holds only the first sessions.' } },
            content: { 'text/calendar': { schema: ICalendarText } },
          },
          ...problemResponses(404, 429, 503),
        },
      },
    },
    async (request, reply) => {
      const feed = found.get(request);
      if (feed === undefined) throw notFound('calendar feed');
      const { body, etag, truncated } = await calendar.ics(feed);
      if (truncated) reply.header('x-focus-feed-truncated', 'true');
      // Calendar apps poll: each poll revalidates with If-None-Match instead of trusting a cached copy.
      // The tag was computed with the bytes, once per version of the feed: the ETag rules take it as is.
      return reply.header('cache-control', 'private, no-cache').header('etag', etag).type('text/calendar; charset=utf-8').send(body);
    },
  );
};
