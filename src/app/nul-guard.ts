import type { FastifyInstance } from 'fastify';
import { type FieldError, MAX_LISTED_ERRORS, validationFailed } from '../toolkit/errors.js';

const NUL = '\u0000';
const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';
/** With the `u` flag a well-formed surrogate pair is one code point, so only a lone half matches. */
const LONE_SURROGATE = /\p{Surrogate}/u;
const SURROGATE_MESSAGE = 'must not contain a lone UTF-16 surrogate (\\uD800–\\uDFFF without its pair)';
const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

const problemIn = (text: string): string | undefined =>
  text.includes(NUL) ? NUL_MESSAGE : LONE_SURROGATE.test(text) ? SURROGATE_MESSAGE : undefined;

/**
 * Every string (value or key) in `value` that contains NUL or a lone surrogate, in document
 * order. Depth is bounded by the JSON depth limit; `path` is the stack of pointer tokens to
 * `value`, joined only for what is listed; the rest is counted.
 */
function badText(value: unknown, path: string[], out: FieldError[], counted: { total: number }): void {
  const report = (message: string) => {
    counted.total++;
    if (out.length < MAX_LISTED_ERRORS) out.push({ path: path.length === 0 ? '/' : `/${path.join('/')}`, message });
  };
  if (typeof value === 'string') {
    const message = problemIn(value);
    if (message !== undefined) report(message);
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item !== 'object' && typeof item !== 'string') continue;
      path.push(String(i));
      badText(item, path, out, counted);
      path.pop();
    }
  } else if (typeof value === 'object' && value !== null) {
    for (const k in value) {
      path.push(escapePointer(k));
      const message = problemIn(k);
      if (message !== undefined) report(message);
      badText((value as Record<string, unknown>)[k], path, out, counted);
      path.pop();
    }
  }
}

/*
 * PostgreSQL text cannot hold U+0000 (SQLite can), so such text would be a 500 on one
 * dialect and stored on the other. A lone surrogate is not Unicode text at all: each
 * driver stored it altered, and differently (U+FFFD, or invalid UTF-8). Both are refused
 * up front, the same on both: 422.
 */
export function installNulGuard(app: FastifyInstance): void {
  app.addHook('preValidation', (request, _reply, done) => {
    const errors: FieldError[] = [];
    const counted = { total: 0 };
    badText(request.query, [], errors, counted);
    badText(request.body, [], errors, counted);
    done(counted.total > 0 ? validationFailed(errors, undefined, counted.total) : undefined);
  });
}
