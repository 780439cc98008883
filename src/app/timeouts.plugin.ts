import type { ServerOptions } from 'node:http';
import { PassThrough } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../toolkit/errors.js';

/*
 * Slow clients (contract section 6): the request line and headers must arrive within
 * the header deadline, the body within the body deadline after them. A client that
 * trickles a byte at a time gets 408 problem+json and its connection closed; it holds
 * no slot other requests need meanwhile (the SQLite concurrency gate is taken only
 * once the body has arrived, see addConcurrencyGate).
 */

export interface Deadlines {
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
}

/**
 * Node's own deadlines, checked by the HTTP server: headers (an idle new connection
 * included), and the whole request as a backstop for the body deadline below. Node
 * checks them every `connectionsCheckingInterval` (30 s by default, which would double
 * a 30 s deadline). Their 408 goes through clientErrorHandler.
 */
export function serverDeadlines({ headersTimeoutMs, bodyTimeoutMs }: Deadlines): { requestTimeout: number; http: ServerOptions } {
  const requestTimeout = headersTimeoutMs + bodyTimeoutMs;
  return {
    requestTimeout,
    http: {
      headersTimeout: headersTimeoutMs,
      requestTimeout,
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(headersTimeoutMs / 10))),
    },
  };
}

export const requestTimeout = (seconds: number) =>
  new ApiError(
    408,
    'request-timeout',
    'Request timeout',
    `The request body did not arrive within ${seconds} s.`,
    undefined,
    // The rest of the body may still be on its way; nothing after it on this connection can be read.
    { connection: 'close' },
  );

const hasBody = (headers: Record<string, string | string[] | undefined>) =>
  headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');

/**
 * The body deadline, counted from the end of the headers: the body is read through a
 * stream that fails with 408 when the deadline passes first, which Fastify hands to the
 * error handler like any other body error.
 */
export function installBodyDeadline(app: FastifyInstance, bodyTimeoutMs: number): void {
  app.addHook('preParsing', (request, reply, payload, done) => {
    if (!hasBody(request.headers)) {
      done(null, payload);
      return;
    }
    const guarded = new PassThrough();
    // The body reader listens once it reads; a body it never reads (a 413 decided by
    // Content-Length) must not turn the deadline into an unhandled error.
    guarded.on('error', () => undefined);
    const timer = setTimeout(() => guarded.destroy(requestTimeout(Math.round(bodyTimeoutMs / 100) / 10)), bodyTimeoutMs);
    const stop = () => clearTimeout(timer);
    payload.once('end', stop);
    payload.once('close', stop);
    // Answered already (413, 415, …): the deadline no longer matters.
    reply.raw.once('finish', stop);
    reply.raw.once('close', stop);
    payload.once('error', (error) => {
      stop();
      guarded.destroy(error);
    });
    payload.pipe(guarded);
    done(null, guarded);
  });
}

/** The body deadline (see installBodyDeadline) for every route. */
export const bodyDeadlinePlugin = fp<{ bodyTimeoutMs: number }>(
  (app, { bodyTimeoutMs }, done) => {
    installBodyDeadline(app, bodyTimeoutMs);
    done();
  },
  { name: 'focus-body-deadline' },
);
