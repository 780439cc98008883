/**
 * Every kind of problem a client can see (the `<slug>` of a problem's `type`,
 * `<origin>/problems/<slug>`), with what its page at that address says: the one source for
 * the slugs ApiError accepts and for the pages the server serves (contract section 14).
 */
export interface ProblemKind {
  /** The HTTP status it comes with. */
  readonly status: number;
  readonly title: string;
  /** When it happens. */
  readonly when: string;
  /** What to do about it. */
  readonly todo: string;
}

export const PROBLEMS = {
  'bad-request': {
    status: 400,
    title: 'Bad request',
    when: 'The request cannot be read: malformed JSON, a malformed query string or Idempotency-Key, a URL that is not validly percent-encoded, or a request that is not valid HTTP/1.1.',
    todo: 'Fix the request as `detail` says; sending it again unchanged gives the same answer.',
  },
  unauthorized: {
    status: 401,
    title: 'Unauthorized',
    when: 'The bearer token is missing, malformed, unknown, expired or revoked. The answer is the same whichever it is.',
    todo: 'Send `Authorization: Bearer <token>` with a valid token; an administrator issues one with `npx focus tokens issue <handle>`.',
  },
  forbidden: {
    status: 403,
    title: 'Forbidden',
    when: 'You can see the record, but it is not yours to change (for example a session another user created).',
    todo: 'Ask its owner, or change only what your role allows.',
  },
  'insufficient-scope': {
    status: 403,
    title: 'Insufficient scope',
    when: 'The token is limited to scopes (a personal token or a connected app’s) and this route needs one it does not have; `detail` names it.',
    todo: 'Use a token that has the scope, or have one made with it (`POST /api/v1/me/tokens`, or the app asks again with that `scope`).',
  },
  'cross-origin': {
    status: 403,
    title: 'Cross-origin request',
    when: 'A request authenticated by the sign-in cookie tried to change something, but it did not come from the web app’s own origin (`Origin` / `Sec-Fetch-Site`).',
    todo: 'Send changes from the web app itself, or use a bearer token from other programs.',
  },
  'not-found': {
    status: 404,
    title: 'Not found',
    when: 'The record or route does not exist, or it is not visible to you.',
    todo: 'Check the id and the path; list the records to find the ones you can see.',
  },
  'method-not-allowed': {
    status: 405,
    title: 'Method not allowed',
    when: 'The path exists, but not with this HTTP method.',
    todo: 'Use one of the methods named in the `Allow` header.',
  },
  'request-timeout': {
    status: 408,
    title: 'Request timeout',
    when: 'The request line, headers or body did not arrive within the server’s deadline; the connection is closed.',
    todo: 'Send the request again on a new connection, without pauses in the middle.',
  },
  conflict: {
    status: 409,
    title: 'Conflict',
    when: 'The change conflicts with the record’s state, for example moving a session’s status backwards.',
    todo: 'Read the record again and send a change that fits its current state.',
  },
  'not-started': {
    status: 409,
    title: 'Not started',
    when: 'A `complete` of an occurrence (or a one-off session) whose `starts_at` is still in the future.',
    todo: 'Complete it once it has started (any time after, also after it ended).',
  },
  'idempotency-key-in-flight': {
    status: 409,
    title: 'Conflict',
    when: 'A request with the same Idempotency-Key is still being handled.',
    todo: 'Wait the seconds in `Retry-After` and send it again with the same key: you get its stored answer.',
  },
  'sync-expired': {
    status: 410,
    title: 'Sync expired',
    when: 'The change-feed cursor is older than the change log keeps (7 days).',
    todo: 'Sync in full again: `GET /api/v1/changes` without a cursor.',
  },
  'precondition-failed': {
    status: 412,
    title: 'Precondition failed',
    when: '`If-Match` names no current ETag of the record: someone changed it since you read it. Nothing was changed.',
    todo: 'GET the record again, merge your change, and send it with the new ETag.',
  },
  'payload-too-large': {
    status: 413,
    title: 'Payload too large',
    when: 'The body is larger than the server accepts.',
    todo: 'Send less per request: split a bulk import into several.',
  },
  'unsupported-media-type': {
    status: 415,
    title: 'Unsupported media type',
    when: 'The body is not JSON (`Content-Type` is not `application/json`).',
    todo: 'Send the body as JSON with `Content-Type: application/json`.',
  },
  'validation-failed': {
    status: 422,
    title: 'Validation failed',
    when: 'The request breaks field rules; `errors` lists each one (`path`, a JSON Pointer, and `message`), at most 100, in document order.',
    todo: 'Fix every listed field and send the request again.',
  },
  'idempotency-key-reused': {
    status: 422,
    title: 'Idempotency key reused',
    when: 'The Idempotency-Key was used in the last 24 hours for a different request (method, path or body).',
    todo: 'Use a new key for a new request; reuse a key only to retry the very same request.',
  },
  'rate-limited': {
    status: 429,
    title: 'Too many requests',
    when: 'This token (or, without a valid token, this address) used up its request budget for the current window.',
    todo: 'Wait the seconds in `Retry-After`; the `RateLimit` header shows what is left.',
  },
  'too-many-streams': {
    status: 429,
    title: 'Too many streams',
    when: 'This token holds as many event streams as it may, or the server as many as it keeps.',
    todo: 'Close a stream you no longer read, or retry after `Retry-After`.',
  },
  'headers-too-large': {
    status: 431,
    title: 'Request header fields too large',
    when: 'The request headers are larger than 16 KiB; the connection is closed.',
    todo: 'Send fewer or shorter headers (cookies are the usual cause).',
  },
  'client-error': {
    status: 400,
    title: 'Client error',
    when: 'The request was refused for a reason no other problem type names; the status code and `title` say which.',
    todo: 'Check the request against the API reference at `/docs`.',
  },
  internal: {
    status: 500,
    title: 'Internal server error',
    when: 'Something failed inside the server. It is logged with the request id.',
    todo: 'Retry later; if it persists, report it with the `x-request-id` of the answer.',
  },
  unavailable: {
    status: 503,
    title: 'Service unavailable',
    when: 'The database does not answer, the server is shutting down, or too many sign-ins wait for their password check.',
    todo: 'Retry after `Retry-After` seconds.',
  },
} as const satisfies Record<string, ProblemKind>;

export type ProblemSlug = keyof typeof PROBLEMS;

/** Where the page of a problem kind is served, below the server's origin (or PUBLIC_URL). */
export const PROBLEM_PATH = '/problems/';

/** A problem's `type`: `<origin>/problems/<slug>`; relative when no origin is known. */
export const problemType = (origin: string, slug: ProblemSlug): string => `${origin}${PROBLEM_PATH}${slug}`;

export const isProblemSlug = (text: string): text is ProblemSlug => Object.hasOwn(PROBLEMS, text);
