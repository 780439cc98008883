import { randomUUID } from 'node:crypto';
import type { FastifyRequest, FastifyServerOptions } from 'fastify';

/*
 * No secret reaches a log line at any level (contract section 6, "Logs"). Secrets arrive
 * in headers (Authorization, Cookie, X-Api-Key, …), in query strings (`?access_token=`),
 * in paths, in echoed request ids and in the raw bytes of requests the HTTP parser
 * rejects (`err.rawPacket`). So: requests are logged by method and a redacted URL only,
 * never their headers; errors by a fixed list of fields; and every string that does
 * reach a line is scrubbed of anything shaped like a credential.
 */

export const REDACTED = '[redacted]';

/**
 * Shapes a credential has: one of our tokens or secrets by prefix, a bearer or basic
 * credential, and a run of more than 20 base64 or base64url characters that looks random
 * (randomRun).
 */
const SECRET_SHAPES = /(?:fst_|whsec_)[A-Za-z0-9+/=_-]*|\b(?:Bearer|Basic)\s+\S+|[A-Za-z0-9+=_%-]{21,}/gi;

/**
 * A random secret: more than 20 characters without `-` mixing letters and digits, or,
 * with `-` (base64url, as feed secrets), digits with letters of both cases. Words, dates,
 * paths and identifiers in a stack trace are neither, nor are ids like `deploy-2026-11-28-eu-west-1a`.
 */
const randomRun = (run: string) =>
  (/[0-9]/.test(run) && /[a-z]/.test(run) && /[A-Z]/.test(run)) ||
  run.split('-').some((piece) => piece.length > 20 && /[0-9]/.test(piece) && /[A-Za-z]/.test(piece));

export function scrubSecrets(text: string): string {
  return text.replace(SECRET_SHAPES, (found) => (/^(?:fst_|whsec_|bearer|basic)/i.test(found) || randomRun(found) ? REDACTED : found));
}

/** A calendar feed's path is its secret (`/ical/<secret>.ics`): the whole segment goes, whatever its shape. */
const FEED_PATH = /\/ical\/[^/?#]*/gi;

/** The path with any calendar-feed secret replaced: for logs and for what a problem answer echoes. */
export const redactFeedPath = (path: string) => path.replace(FEED_PATH, `/ical/${REDACTED}`);

/** The path as the router reads it (`/%69cal/…` is `/ical/…`), or as sent when it is not valid percent-encoding. */
function decodedPath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/**
 * The URL as logged: the path decoded and scrubbed, the query string reduced to its
 * parameter names. A query value is never logged: any of them could be a token
 * (`?access_token=`).
 */
export function redactUrl(url: string): string {
  const mark = url.indexOf('?');
  const path = scrubSecrets(redactFeedPath(decodedPath(mark === -1 ? url : url.slice(0, mark))));
  if (mark === -1) return path;
  const names = url
    .slice(mark + 1)
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = scrubSecrets(eq === -1 ? pair : pair.slice(0, eq));
      return eq === -1 ? name : `${name}=…`;
    });
  return `${path}?${names.join('&')}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PLAIN_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;

/**
 * A client's `x-request-id` is echoed and logged, so it is kept only when it cannot be a
 * credential or forge a log line: a UUID, or 1–64 plain characters with nothing the log
 * scrubber would take for a secret (a feed secret is base64url, `-` included). Otherwise
 * the server makes its own.
 */
export function requestIdFrom(given: string | string[] | undefined): string {
  if (typeof given === 'string' && (UUID.test(given) || (PLAIN_ID.test(given) && scrubSecrets(given) === given))) return given;
  return randomUUID();
}

interface LoggedError {
  [field: string]: unknown;
  type: string;
  message: string;
  stack: string;
  code?: string;
  statusCode?: number;
  constraint?: string;
  cause?: LoggedError;
}

/**
 * Errors by a fixed list of fields. Pino's default copies every enumerable property, which
 * is how a parser error's `rawPacket` (the request's bytes, bearer token included) got out.
 */
export function serializeError(error: unknown, depth = 0): LoggedError {
  if (!(error instanceof Error)) return { type: typeof error, message: scrubSecrets(String(error)), stack: '' };
  const e = error as Error & { code?: unknown; statusCode?: unknown; constraint?: unknown };
  return {
    type: e.name,
    message: scrubSecrets(e.message),
    stack: scrubSecrets(e.stack ?? ''),
    ...(typeof e.code === 'string' ? { code: e.code } : {}),
    ...(typeof e.statusCode === 'number' ? { statusCode: e.statusCode } : {}),
    ...(typeof e.constraint === 'string' ? { constraint: e.constraint } : {}),
    ...(e.cause !== undefined && depth < 3 ? { cause: serializeError(e.cause, depth + 1) } : {}),
  };
}

/** Headers that carry credentials, in case anything ever logs a request's headers. */
const SECRET_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key', 'x-auth-token', 'x-access-token', 'x-request-id'];

type LoggerOptions = Exclude<NonNullable<FastifyServerOptions['logger']>, boolean>;

/** Pino options that keep secrets out of every line; spread into the logger options. */
export const redactingLoggerOptions = {
  serializers: {
    req: (request: FastifyRequest) => ({
      method: request.method,
      url: redactUrl(request.url),
      remoteAddress: request.ip,
      remotePort: request.socket?.remotePort,
    }),
    err: (error: unknown) => serializeError(error),
  },
  redact: {
    paths: SECRET_HEADERS.flatMap((h) => [`req.headers["${h}"]`, `headers["${h}"]`, `request.headers["${h}"]`]).concat(['rawPacket', 'err.rawPacket', 'error.rawPacket']),
    censor: REDACTED,
  },
  hooks: {
    // Message strings and their interpolated arguments, scrubbed like everything else.
    logMethod(this: unknown, args: unknown[], method: (...args: unknown[]) => void) {
      method.apply(this, args.map((a) => (typeof a === 'string' ? scrubSecrets(a) : a)));
    },
  },
} satisfies LoggerOptions;
