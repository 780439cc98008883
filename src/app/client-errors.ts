import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyInstance, FastifyServerOptions } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../toolkit/errors.js';
import { type ProblemSlug, problemType } from '../toolkit/problem.catalog.js';

/*
 * Requests Node's HTTP parser rejects before Fastify sees them (malformed request line or
 * headers, headers over 16 KiB, a header deadline missed) are answered here, as
 * problem+json like every other error (contract section 6), and then the connection is
 * closed: after a parse error nothing more on it can be trusted. Fastify's default handler
 * answered plain JSON and logged the request's raw bytes (`err.rawPacket`), bearer token
 * included. So are the two protocol errors Node parses but leaves unanswered or answers
 * bare: CONNECT and an HTTP/1.1 request without `Host` (protocolErrorsPlugin).
 */

interface Answer {
  status: number;
  slug: ProblemSlug;
  title: string;
  detail: string;
  headers?: Record<string, string>;
}

const ANSWERS: Record<string, Answer> = {
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, slug: 'request-timeout', title: 'Request timeout', detail: 'The request did not arrive in time.' },
  HPE_HEADER_OVERFLOW: { status: 431, slug: 'headers-too-large', title: 'Request header fields too large', detail: 'The request headers are larger than 16 KiB.' },
};
const MALFORMED: Answer = { status: 400, slug: 'bad-request', title: 'Bad request', detail: 'The request is not valid HTTP/1.1.' };

const answerFor = (code: string | undefined): Answer => (code === undefined ? undefined : ANSWERS[code]) ?? MALFORMED;

/**
 * The bytes of a complete problem+json response that closes the connection. `origin`:
 * PUBLIC_URL, or "" (the request could not be read, so its Host is not known) for a
 * `type` relative to the request's own address.
 */
export function rawProblemResponse(answer: Answer, origin: string): string {
  const body = JSON.stringify({ type: problemType(origin, answer.slug), title: answer.title, status: answer.status, detail: answer.detail });
  return (
    `HTTP/1.1 ${answer.status} ${answer.title}\r\n` +
    Object.entries(answer.headers ?? {})
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('') +
    'Content-Type: application/problem+json\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  );
}

/**
 * Writes `answer` on `socket` and closes it, whatever the peer does (it may never close its
 * side). Bytes after a valid request that broke the parser (or a CONNECT pipelined after
 * it) arrive while that request is still handled: its response goes first, whole, then
 * this one. Answering at once cut it off, and the client lost the answer to a write that
 * committed (a new feed's secret URL, shown only once).
 */
function answerAndClose(socket: Socket, answer: Answer, origin: string | null): void {
  const now = () => {
    if (socket.writable) socket.end(rawProblemResponse(answer, origin ?? ''), () => socket.destroy());
    else socket.destroy();
  };
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (inFlight === undefined || inFlight === null || inFlight.writableFinished) {
    now();
    return;
  }
  let done = false;
  const after = () => {
    if (done) return;
    done = true;
    now();
  };
  inFlight.once('finish', after);
  inFlight.once('close', after);
}

/** Pass as the `clientErrorHandler` server option. */
export const clientErrorHandler: NonNullable<FastifyServerOptions['clientErrorHandler']> = function (
  this: FastifyInstance,
  error: Error & { code?: string },
  socket: Socket,
) {
  if (error.code === 'ECONNRESET' || error.code === 'EPIPE' || socket.destroyed) return;
  const answer = answerFor(error.code);
  // The code only: the error itself carries the raw request bytes.
  this.log.debug({ code: error.code, status: answer.status }, 'client error');
  answerAndClose(socket, answer, this.publicUrl);
};

/*
 * CONNECT asks a proxy for a tunnel to `host:port`; this server is no proxy. Node hands
 * such a request to the server's `connect` listeners and, with none, destroyed the socket
 * without a word. The answer is what origin servers give (nginx, Apache): 405. Its `Allow`
 * is empty, which RFC 9110 (section 10.2.1) defines as "the target resource allows no
 * methods": the target of a CONNECT names no resource of this server. The parser has let
 * go of the connection by then, so it is closed after the answer.
 */
const CONNECT_REFUSED: Answer = {
  status: 405,
  slug: 'method-not-allowed',
  title: 'Method not allowed',
  detail: 'CONNECT is not supported: this server is not a proxy.',
  headers: { Allow: '' },
};

/**
 * An HTTP/1.1 request without `Host` (RFC 9112 section 3.2: 400). Node answered it itself,
 * with a bare 400, before any hook ran; with its `requireHostHeader: false` server option
 * the request comes here and gets problem+json like every other error.
 */
const missingHost = () =>
  new ApiError(400, 'bad-request', 'Bad request', 'An HTTP/1.1 request must carry a Host header.', undefined, { connection: 'close' });

/** The HTTP server options this plugin depends on. */
export const protocolServerOptions = { requireHostHeader: false } as const;

/**
 * Protocol errors Node leaves to the application: a missing `Host`, and CONNECT. Register
 * before the auth and rate-limit plugins: no token, budget or body is looked at for these.
 */
export const protocolErrorsPlugin = fp(
  (app, _options, done) => {
    const log: FastifyBaseLogger = app.log;
    app.server.on('connect', (_request: IncomingMessage, socket: Socket) => {
      socket.on('error', () => undefined);
      log.debug({ status: CONNECT_REFUSED.status }, 'CONNECT refused');
      answerAndClose(socket, CONNECT_REFUSED, app.publicUrl);
    });
    app.addHook('onRequest', (request, _reply, hookDone) => {
      hookDone(request.raw.httpVersion === '1.1' && request.headers.host === undefined ? missingHost() : undefined);
    });
    done();
  },
  { name: 'focus-protocol-errors' },
);
