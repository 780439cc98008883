import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { tooManyStreams, validationFailed } from '../../toolkit/errors.js';
import { problemResponses } from '../../toolkit/problem.schema.js';
import { bearerToken, hashToken } from '../auth/auth.token.js';
import { decodeFeedCursor } from '../changes/changes.service.js';
import type { EventHub } from './events.hub.js';
import { EventStream, EventsHeaders, EventsQuery } from './events.schema.js';

/** How long a client's EventSource waits before reconnecting after the stream ends (SSE `retry:`). */
const RETRY_MS = 2_000;

/**
 * GET /events. Register it outside the SQLite concurrency gate: the gate holds a slot until
 * a response finishes, and a stream never does; its reads are the hub's, bounded per tick.
 */
export const eventsRoutes: FastifyPluginAsyncTypebox<{ hub: EventHub; perToken: number }> = async (app, { hub, perToken }) => {
  app.get(
    '/events',
    {
      schema: {
        tags: ['sync'],
        operationId: 'streamEvents',
        summary: 'Live events: changes, reminders, and sessions starting and ending',
        description:
          'Server-sent events (`Accept: text/event-stream`): what `GET /changes` would list, pushed as it commits on any instance (within about a second), ' +
          'one `event: change` per entry with `id` = the cursor after it; and `event: session.started` / `session.ended` as each occurrence of a session you ' +
          'created, collaborate on or joined starts and ends, and `event: session.starting` (with `minutes_before`) at each of its reminders (the session’s ' +
          '`reminders`, or when null yours, `GET /me`). A `:` comment line comes at least every 15 s. Resumes after `Last-Event-ID` (or `cursor`: ' +
          'a `next_cursor` of `GET /changes` once its full sync is done); without either it starts with what changes from now on. ' +
          `At most ${perToken} streams per token (429 \`too-many-streams\`). The stream ends when the server shuts down or the token is revoked; reconnect with \`Last-Event-ID\`.`,
        querystring: EventsQuery,
        headers: EventsHeaders,
        response: {
          200: { description: 'The stream; it stays open.', content: { 'text/event-stream': { schema: EventStream } } },
          ...problemResponses(401, 410, 422, 429, 503),
        },
      },
    },
    async (request, reply) => {
      const raw = request.headers['last-event-id'] ?? request.query.cursor;
      const at = raw === undefined ? undefined : decodeFeedCursor(raw);
      if (at !== undefined && at.phase !== 'log') {
        throw validationFailed([{ path: '/cursor', message: 'is a cursor of an unfinished full sync: finish it with GET /changes first' }]);
      }
      // The credential's own hash (a sign-in cookie's too): its revocation ends the stream.
      const tokenHash = request.user.credential?.hash ?? hashToken(bearerToken(request.headers.authorization) ?? '');
      // The slot is taken before anything is awaited: concurrent opens see each other (contract section 13, caps).
      const slot = hub.reserve(tokenHash);
      if (slot === undefined) throw tooManyStreams(perToken);
      // HEAD: what GET would answer, without a stream (one that never ends would hold a stream slot for nothing).
      if (request.method === 'HEAD') {
        slot.release();
        return reply.header('cache-control', 'no-cache, no-transform').type('text/event-stream; charset=utf-8').send('');
      }
      let cursor: number;
      try {
        cursor = at?.head ?? (await hub.head());
      } catch (error) {
        slot.release();
        throw error;
      }

      // From here the response is ours: no serializer, ETag or other onSend hook touches it.
      reply.hijack();
      const res = reply.raw;
      // The connection ends with the stream: a kept-alive idle socket would hold a
      // shutting-down server until its keep-alive timeout.
      res.shouldKeepAlive = false;
      res.writeHead(200, {
        ...(reply.getHeaders() as Record<string, string>),
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        // Proxies (nginx) would otherwise buffer the stream.
        'x-accel-buffering': 'no',
      });
      // Node's request deadlines cover receiving the request, which is over; the socket
      // itself must not time out while the stream is quiet between heartbeats.
      request.raw.socket.setTimeout(0);
      res.write(`retry: ${RETRY_MS}\n\n`);
      await hub.open({ user: request.user, tokenHash, res, cursor, slot });
    },
  );
};
