import { Type } from 'typebox';
import { BODY_LIMIT_LABEL } from './api.js';

export const ProblemSchema = Type.Object(
  {
    type: Type.String({ format: 'uri' }),
    title: Type.String(),
    status: Type.Integer({ minimum: 400, maximum: 599 }),
    detail: Type.String(),
    instance: Type.Optional(Type.String()),
    errors: Type.Optional(
      Type.Array(Type.Object({ path: Type.String(), message: Type.String() }, { additionalProperties: false })),
    ),
  },
  { $id: 'Problem', title: 'Problem', description: 'RFC 9457 problem details (application/problem+json).' },
);

const ref = Type.Ref('Problem');

const describe = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ref } },
});

/** The error responses an operation documents; every route lists the ones it can answer. */
export const problems = {
  400: describe('Malformed JSON or query syntax, or a malformed Idempotency-Key.'),
  401: describe('Missing, invalid, expired or revoked token.'),
  403: describe('Visible, but not yours to change.'),
  404: describe('Absent, or not visible to you.'),
  409: describe('State conflict, or a request with this Idempotency-Key still running (`idempotency-key-in-flight`, with Retry-After).'),
  412: describe('`precondition-failed`: If-Match names no current ETag of the record; nothing was changed.'),
  413: describe(`Body over ${BODY_LIMIT_LABEL}.`),
  415: describe('Body is not JSON.'),
  422: describe(
    'A field rule is broken, or a string in the body or query contains NUL (U+0000) or a lone UTF-16 surrogate; `errors` lists them ' +
      '(at most 100, in document order; `detail` gives the total). Or `idempotency-key-reused`: the Idempotency-Key was used for another request.',
  ),
  429: describe('Rate limited; see Retry-After.'),
  503: describe('Database unavailable; retry.'),
} as const;

type Code = keyof typeof problems;
export function problemResponses<const C extends readonly Code[]>(...codes: C) {
  const out: Partial<Record<Code, (typeof problems)[Code]>> = {};
  for (const c of codes) out[c] = problems[c];
  return out as { [K in C[number]]: (typeof problems)[K] };
}
