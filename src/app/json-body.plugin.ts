import fp from 'fastify-plugin';
import { badRequest, unsupportedMediaType } from '../toolkit/errors.js';
import { MAX_JSON_DEPTH, jsonDepth } from '../toolkit/json-depth.js';
import { installNulGuard } from './nul-guard.js';

const CHARSET = /;\s*charset\s*=\s*"?([^";\s]+)/i;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

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
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, raw, parsed) => {
      // JSON is UTF-8 (RFC 8259 section 8.1): another declared charset is refused, not misread.
      const charset = CHARSET.exec(request.headers['content-type'] ?? '')?.[1]?.toLowerCase();
      if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
        parsed(unsupportedMediaType('Send the body as application/json in UTF-8.'), undefined);
        return;
      }
      let body: string;
      try {
        // Fatal: a byte that is not UTF-8 is a 400, not a U+FFFD stored in its place.
        body = utf8.decode(raw as Buffer);
      } catch {
        parsed(badRequest('The body is not valid UTF-8.'), undefined);
        return;
      }
      if (jsonDepth(body, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
        parsed(badRequest(`The JSON body nests deeper than ${MAX_JSON_DEPTH} levels.`), undefined);
        return;
      }
      void parse(request, body, parsed);
    });
    installNulGuard(app);
    done();
  },
  { name: 'focus-json-body' },
);
