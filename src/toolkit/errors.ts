/**
 * The error catalog: every failure a client can see, as a typed error that one
 * handler renders as RFC 9457 problem+json. Handlers throw these; nothing else
 * decides a status code. Each slug is a kind of problem.catalog.ts, whose page its `type` names.
 */
import type { ProblemSlug } from './problem.catalog.js';

export interface FieldError {
  /** JSON Pointer into the request part (body, query or path), e.g. `/tasks/3/context`. */
  path: string;
  message: string;
}

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly slug: ProblemSlug,
    readonly title: string,
    readonly detail: string,
    readonly errors?: FieldError[],
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }
}

export const badRequest = (detail: string, errors?: FieldError[]) =>
  new ApiError(400, 'bad-request', 'Bad request', detail, errors);

/**
 * One 401 for every failed bearer check (missing, malformed, unknown, expired, revoked), so
 * that its text tells a client nothing about which. The challenge follows RFC 6750 section
 * 3.1: `error="invalid_token"` when a bearer token was presented, none when the request
 * had no bearer credentials (no header, another scheme, `Bearer` without a token).
 */
export const unauthorized = (bearerTokenSent: boolean) =>
  new ApiError(
    401,
    'unauthorized',
    'Unauthorized',
    'A valid bearer token is required: send `Authorization: Bearer <token>` with a token that is not expired or revoked.',
    undefined,
    { 'www-authenticate': bearerTokenSent ? 'Bearer realm="focus", error="invalid_token"' : 'Bearer realm="focus"' },
  );

export const forbidden = (detail: string) => new ApiError(403, 'forbidden', 'Forbidden', detail);

export const notFound = (what = 'resource') =>
  new ApiError(404, 'not-found', 'Not found', `The ${what} does not exist or is not visible to you.`);

export const methodNotAllowed = (allow: string[]) =>
  new ApiError(405, 'method-not-allowed', 'Method not allowed', `Allowed methods: ${allow.join(', ')}.`, undefined, {
    allow: allow.join(', '),
  });

export const conflict = (detail: string) => new ApiError(409, 'conflict', 'Conflict', detail);

/** Completing an occurrence before its start. */
export const notStarted = (startsAt: string) =>
  new ApiError(409, 'not-started', 'Not started', `This occurrence starts at ${startsAt}; it can be completed once it has started.`);

export const preconditionFailed = () =>
  new ApiError(
    412,
    'precondition-failed',
    'Precondition failed',
    'If-Match names no current ETag of this record, so nothing was changed; GET it again and retry with its ETag.',
  );

/** A change-feed cursor older than the change log keeps: what changed since may be gone. */
export const syncExpired = () =>
  new ApiError(410, 'sync-expired', 'Sync expired', 'This cursor is older than the change log keeps (7 days); start a full sync again without a cursor.');

export const payloadTooLarge = (detail: string) => new ApiError(413, 'payload-too-large', 'Payload too large', detail);

export const unsupportedMediaType = (detail: string) =>
  new ApiError(415, 'unsupported-media-type', 'Unsupported media type', detail);

/** A 422 lists at most this many errors, the first ones in document order; `detail` gives the total. */
export const MAX_LISTED_ERRORS = 100;

/** `total`: how many rules the request breaks, when `errors` already holds only the first ones. */
export function validationFailed(errors: FieldError[], detail?: string, total = errors.length): ApiError {
  const listed = errors.slice(0, MAX_LISTED_ERRORS);
  return new ApiError(
    422,
    'validation-failed',
    'Validation failed',
    (detail ?? `The request breaks ${total === 1 ? 'a field rule' : `${total} field rules`}.`) +
      (total > listed.length ? ` The first ${listed.length} are listed.` : ''),
    listed,
  );
}

export const rateLimited = (retryAfterSeconds: number) =>
  new ApiError(429, 'rate-limited', 'Too many requests', `Rate limit exceeded; retry in ${retryAfterSeconds} s.`, undefined, {
    'retry-after': String(retryAfterSeconds),
  });

/** Too many event streams open for one token. */
export const tooManyStreams = (max: number) =>
  new ApiError(429, 'too-many-streams', 'Too many streams', `At most ${max} event streams may be open per token (and a bounded number per server); close one first.`, undefined, {
    'retry-after': '5',
  });

export const internalError = () =>
  new ApiError(500, 'internal', 'Internal server error', 'Something went wrong on our side; the request id identifies it in our logs.');

export const unavailable = (detail = 'The database is unavailable; retry shortly.') =>
  new ApiError(503, 'unavailable', 'Service unavailable', detail, undefined, { 'retry-after': '1' });

/** Collects field errors so that one response lists every broken rule. */
export class FieldErrors {
  readonly list: FieldError[] = [];
  add(path: string, message: string): this {
    this.list.push({ path, message });
    return this;
  }
  get empty(): boolean {
    return this.list.length === 0;
  }
  throwIfAny(): void {
    if (!this.empty) throw validationFailed(this.list);
  }
}

/** A scoped token (contract section 12) on a route that needs a scope it lacks. */
export const insufficientScope = (needed: string) =>
  new ApiError(403, 'insufficient-scope', 'Insufficient scope', `This route needs a token with ${needed}.`);

/** A cookie-authenticated change that did not come from the app's own origin (the CSRF rule of contract section 12). */
export const crossOrigin = () =>
  new ApiError(403, 'cross-origin', 'Cross-origin request', 'A change made with the sign-in cookie must come from this server’s own web app; other programs send a bearer token.');

/** A failed sign-in: one answer whatever was wrong (unknown handle, wrong password, no password, disabled user). */
export const signInFailed = () =>
  new ApiError(401, 'unauthorized', 'Unauthorized', 'The handle or the password is wrong.', undefined, { 'www-authenticate': 'Bearer realm="focus"' });
