import fp from 'fastify-plugin';
import { badRequest } from '../toolkit/errors.js';
import { MAX_JSON_DEPTH, jsonDepth } from '../toolkit/json-depth.js';
import { installNulGuard } from './nul-guard.js';

/**
 * Bodies are JSON only, parsed with a depth limit checked on the raw text (the
 * prototype-poisoning scan after JSON.parse walks the value recursively, and a body of
 * 500 000 `[` would reach it), and no string may hold what one database cannot store.
 */
export const jsonBodyPlugin = fp(
  (app, _options, done) => {
    // Fastify's built-in text/plain parser would turn a text body into a 422 instead of a 415.
    app.removeContentTypeParser('text/plain');
    const parse = app.getDefaultJsonParser('error', 'error');
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, parsed) => {
      if (jsonDepth(body as string, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
        parsed(badRequest(`The JSON body nests deeper than ${MAX_JSON_DEPTH} levels.`), undefined);
        return;
      }
      void parse(request, body as string, parsed);
    });
    installNulGuard(app);
    done();
  },
  { name: 'focus-json-body' },
);
