import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import fp from 'fastify-plugin';
import {
  ForeignKeyViolationError,
  StorageUnavailableError,
  TransactionConflictError,
  UniqueViolationError,
} from '../storage/storage.errors.js';
import { BODY_LIMIT_LABEL } from '../toolkit/api.js';
import {
  ApiError,
  badRequest,
  conflict,
  internalError,
  methodNotAllowed,
  notFound,
  payloadTooLarge,
  unavailable,
  unsupportedMediaType,
  validationFailed,
} from '../toolkit/errors.js';
import { MethodIndex } from '../toolkit/method-index.js';
import { problemType } from '../toolkit/problem.catalog.js';
import { toFieldErrors } from '../toolkit/validation.js';
import { redactFeedPath } from './log-redaction.js';
import { requestOrigin } from './public-origin.js';

function fromFastifyError(error: FastifyError): ApiError | undefined {
  if (error.validation !== undefined) {
    // A path id that is not a positive integer names nothing that can exist.
    if (error.validationContext === 'params') return notFound();
    return validationFailed(toFieldErrors(error.validation));
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return payloadTooLarge(`The request body is larger than ${BODY_LIMIT_LABEL}.`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return unsupportedMediaType('Send the body as application/json.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return badRequest('The body is empty but the content type says JSON.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      // Fastify reports a `__proto__`/`constructor` key (prototype poisoning) with this code too.
      return badRequest('The body is not valid JSON, or it contains a forbidden key (__proto__ or constructor).');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return badRequest('The body does not match its Content-Length.');
    default:
      break;
  }
  if (error instanceof SyntaxError || (error.statusCode === 400 && /JSON/i.test(error.message))) {
    return badRequest('The body is not valid JSON.');
  }
  if (error.statusCode === 400 && /prototype/i.test(error.message)) {
    return badRequest('The body contains a forbidden key (__proto__ or constructor).');
  }
  return undefined;
}

/** Storage translated its driver's error where the query ran; here it only becomes an answer. */
function fromStorageError(error: unknown): ApiError | undefined {
  if (error instanceof StorageUnavailableError || error instanceof TransactionConflictError) return unavailable();
  if (error instanceof UniqueViolationError) return conflict('The change collides with an existing record; retry.');
  if (error instanceof ForeignKeyViolationError) return conflict('A record this change refers to was removed meanwhile.');
  return undefined;
}

export function sendProblem(reply: FastifyReply, request: FastifyRequest, problem: ApiError): FastifyReply {
  const body = {
    type: problemType(requestOrigin(request), problem.slug),
    title: problem.title,
    status: problem.status,
    detail: problem.detail,
    // A feed's path is its secret: never echoed, and one 404 body whatever the secret.
    instance: redactFeedPath(request.url.split('?')[0] ?? ''),
    ...(problem.errors === undefined ? {} : { errors: problem.errors }),
  };
  // Pre-serialised: a problem is never shaped by a route's success schema.
  return reply.code(problem.status).headers(problem.headers).type('application/problem+json').send(JSON.stringify(body));
}

export interface ErrorsOptions {
  /** Answers an unknown path itself (the web app's page for a browser), or leaves it to the 404 problem (undefined). */
  pageNotFound?: (request: FastifyRequest, reply: FastifyReply) => FastifyReply | undefined;
}

/**
 * One renderer for every failure: typed errors, Fastify's own, storage errors, and real
 * faults; a known path with the wrong method answers 405 with `Allow`. Registered before
 * any route, so that it learns every route's methods.
 */
export const errorsPlugin = fp<ErrorsOptions>(
  (app, options, done) => {
    const methods = new MethodIndex();
    app.addHook('onRoute', (route) => methods.add(route.url, route.method));

    app.setErrorHandler((error: FastifyError, request, reply) => {
      if (error.validationContext === 'params') {
        // The id did not parse because the path is another route's (GET /tasks/bulk): 405, not 404.
        const exact = methods.exact(request.url.split('?')[0] ?? '/');
        if (exact.length > 0 && !exact.includes(request.method)) return sendProblem(reply, request, methodNotAllowed(exact));
      }
      const problem = error instanceof ApiError ? error : (fromFastifyError(error) ?? fromStorageError(error));
      if (problem !== undefined) {
        if (problem.status >= 500) request.log.warn({ err: error }, 'request failed: %s', problem.title);
        return sendProblem(reply, request, problem);
      }
      if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
        // A Fastify/plugin client error we did not map: keep its status, not its internals.
        const title = STATUS_CODES[error.statusCode] ?? 'Client error';
        return sendProblem(reply, request, new ApiError(error.statusCode, 'client-error', title, 'The request was rejected.'));
      }
      request.log.error({ err: error }, 'unhandled error');
      return sendProblem(reply, request, internalError());
    });

    app.setNotFoundHandler((request, reply) => {
      const allow = methods.allowed(request.url.split('?')[0] ?? '/');
      // A route of this method that found nothing (a missing asset) is 404, not "405, Allow: GET" to a GET.
      if (allow.length > 0 && !allow.includes(request.method)) return sendProblem(reply, request, methodNotAllowed(allow));
      return options.pageNotFound?.(request, reply) ?? sendProblem(reply, request, notFound('route'));
    });
    done();
  },
  { name: 'focus-errors' },
);

/**
 * Failures the router raises before any route or hook runs; without this option
 * Fastify writes its own non-problem JSON (and a 414 that echoes the whole path).
 * Pass as the `frameworkErrors` server option.
 */
export const frameworkErrors: NonNullable<FastifyServerOptions['frameworkErrors']> = (error, request, reply) => {
  reply.header('x-request-id', request.id);
  let problem: ApiError;
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      problem = badRequest('The URL is not validly percent-encoded.');
      break;
    case 'FST_ERR_MAX_PARAM_LENGTH':
      // Far longer than any id we issue: nothing by that name can exist.
      problem = notFound();
      break;
    default:
      request.log.error({ err: error }, 'router failure');
      problem = internalError();
  }
  // A reply is thenable; this callback's return value is ignored by Fastify.
  void sendProblem(reply, request, problem);
};
