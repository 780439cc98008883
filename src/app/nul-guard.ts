import type { FastifyInstance } from 'fastify';
import { type FieldError, validationFailed } from '../toolkit/errors.js';

const NUL = '\u0000';
const MESSAGE = 'must not contain the NUL character (U+0000)';
const escapePointer = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** JSON Pointers of every string (value or key) in `value` that contains NUL. Depth is bounded by the JSON depth limit. */
function nulPaths(value: unknown, path: string, out: FieldError[]): void {
  if (typeof value === 'string') {
    if (value.includes(NUL)) out.push({ path: path === '' ? '/' : path, message: MESSAGE });
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => nulPaths(v, `${path}/${i}`, out));
  } else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      const child = `${path}/${escapePointer(k)}`;
      if (k.includes(NUL)) out.push({ path: child, message: MESSAGE });
      nulPaths(v, child, out);
    }
  }
}

/*
 * PostgreSQL text cannot hold U+0000 (SQLite can), so such text would be a 500 on
 * one dialect and stored on the other. Refused up front, the same on both: 422.
 */
export function installNulGuard(app: FastifyInstance): void {
  app.addHook('preValidation', (request, _reply, done) => {
    const errors: FieldError[] = [];
    nulPaths(request.query, '', errors);
    nulPaths(request.body, '', errors);
    done(errors.length > 0 ? validationFailed(errors) : undefined);
  });
}
