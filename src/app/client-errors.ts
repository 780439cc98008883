import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { PROBLEM_BASE } from '../toolkit/errors.js';

/*
 * Requests Node's HTTP parser rejects before Fastify sees them (malformed request line or
 * headers, headers over 16 KiB, a header deadline missed) are answered here, as
 * problem+json like every other error (contract section 6), and then the connection is
 * closed: after a parse error nothing more on it can be trusted. Fastify's default handler
 * answered plain JSON and logged the request's raw bytes (`err.rawPacket`), bearer token
 * included.
 */

interface Answer {
  status: number;
  slug: string;
  title: string;
  detail: string;
}

const ANSWERS: Record<string, Answer> = {
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, slug: 'request-timeout', title: 'Request timeout', detail: 'The request did not arrive in time.' },
  HPE_HEADER_OVERFLOW: { status: 431, slug: 'headers-too-large', title: 'Request header fields too large', detail: 'The request headers are larger than 16 KiB.' },
};
const MALFORMED: Answer = { status: 400, slug: 'bad-request', title: 'Bad request', detail: 'The request is not valid HTTP/1.1.' };

const answerFor = (code: string | undefined): Answer => (code === undefined ? undefined : ANSWERS[code]) ?? MALFORMED;

/** The bytes of a complete problem+json response that closes the connection. */
export function rawProblemResponse(answer: Answer): string {
  const body = JSON.stringify({ type: PROBLEM_BASE + answer.slug, title: answer.title, status: answer.status, detail: answer.detail });
  return (
    `HTTP/1.1 ${answer.status} ${answer.title}\r\n` +
    'Content-Type: application/problem+json\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  );
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
  // Closed once written, whatever the peer does (it may never close its side).
  const answerAndClose = () => {
    if (socket.writable) socket.end(rawProblemResponse(answer), () => socket.destroy());
    else socket.destroy();
  };
  // Bytes after a valid request broke the parser while that request is still handled: its
  // response goes first, whole, then this one. Answering now cut it off, and the client
  // lost the answer to a write that committed (a new feed's secret URL, shown only once).
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (inFlight === undefined || inFlight === null || inFlight.writableFinished) {
    answerAndClose();
    return;
  }
  let done = false;
  const after = () => {
    if (done) return;
    done = true;
    answerAndClose();
  };
  inFlight.once('finish', after);
  inFlight.once('close', after);
};
