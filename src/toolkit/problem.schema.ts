import { Type } from 'typebox';
import { BODY_LIMIT_LABEL } from './api.js';
import { Named } from './openapi.js';

export const FieldErrorSchema = Named(
  'FieldError',
  Type.Object(
    {
      path: Type.String({ description: 'JSON Pointer into the part of the request that broke the rule (body, query string or path).', examples: ['/tasks/3/context'] }),
      message: Type.String({ examples: ['must be 1–2000 characters after trimming'] }),
    },
    { additionalProperties: false, description: 'One broken rule of a request.' },
  ),
);

export const ProblemSchema = Named(
  'Problem',
  Type.Object(
    {
      type: Type.String({
        format: 'uri-reference',
        description:
          'Stable, for programs: `<origin>/problems/<kind>`, where the origin is the server’s PUBLIC_URL or the address the request was sent to. ' +
          'It resolves to a page saying when the problem happens and what to do. Compare the last part (`<kind>`) in programs.',
        examples: ['https://focus.example.com/problems/validation-failed'],
      }),
      title: Type.String({ description: 'Short, for people.', examples: ['Validation failed'] }),
      status: Type.Integer({ minimum: 400, maximum: 599, description: 'The HTTP status code.' }),
      detail: Type.String({ description: 'What went wrong with this request, for people.', examples: ['The request breaks 1 field rule.'] }),
      instance: Type.Optional(Type.String({ description: 'The request path.', examples: ['/api/v1/tasks'] })),
      errors: Type.Optional(Type.Array(FieldErrorSchema, { description: 'On 422: the broken rules, at most 100, in document order.' })),
    },
    { title: 'Problem', description: 'RFC 9457 problem details (application/problem+json).' },
  ),
);

const describe = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ProblemSchema } },
});

/** The error responses an operation documents; every route lists the ones it can answer. */
export const problems = {
  400: describe('Malformed JSON or query syntax, or a malformed Idempotency-Key.'),
  401: describe('Missing, invalid, expired or revoked token.'),
  403: describe('Visible, but not yours to change.'),
  404: describe('Absent, or not visible to you.'),
  409: describe('State conflict, `not-started` (completing an occurrence before it starts), or a request with this Idempotency-Key still running (`idempotency-key-in-flight`, with Retry-After).'),
  412: describe('`precondition-failed`: If-Match names no current ETag of the record; nothing was changed.'),
  410: describe('`sync-expired`: the change-feed cursor is older than the change log keeps; start a full sync again.'),
  413: describe(`Body over ${BODY_LIMIT_LABEL}.`),
  415: describe('Body is not JSON.'),
  422: describe(
    'A field rule is broken, or a string in the body or query contains NUL (U+0000) or a lone UTF-16 surrogate; `errors` lists them ' +
      '(at most 100, in document order; `detail` gives the total). Or `idempotency-key-reused`: the Idempotency-Key was used for another request.',
  ),
  429: describe('Rate limited; see Retry-After.'),
  503: describe('Unavailable for a moment (the database, or too many password checks waiting); retry after Retry-After.'),
} as const;

type Code = keyof typeof problems;
export function problemResponses<const C extends readonly Code[]>(...codes: C) {
  const out: Partial<Record<Code, (typeof problems)[Code]>> = {};
  for (const c of codes) out[c] = problems[c];
  return out as { [K in C[number]]: (typeof problems)[K] };
}
