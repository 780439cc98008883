import { PassThrough } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

/*
 * Endpoints that take no body (`DELETE`, and `POST …/join|leave|complete`) accept an empty
 * one whatever its Content-Type (contract section 6, "Bodiless endpoints"): clients and
 * libraries send `Content-Type: application/json` on every request, and an empty JSON body
 * was a 400 (and an empty text/plain one a 415). For a route without a body schema, an
 * empty body is no body: its Content-Type is dropped before Fastify picks a parser. A
 * non-empty body is still parsed as usual.
 */

const takesNoBody = (request: FastifyRequest) =>
  request.headers['content-type'] !== undefined && (request.routeOptions.schema?.body ?? undefined) === undefined;

export function installBodilessRoutes(app: FastifyInstance): void {
  app.addHook('preParsing', (request, _reply, payload, done) => {
    if (!takesNoBody(request)) {
      done(null, payload);
      return;
    }
    const headers = request.headers;
    if (headers['transfer-encoding'] === undefined) {
      if (headers['content-length'] === undefined || headers['content-length'] === '0') delete headers['content-type'];
      done(null, payload);
      return;
    }
    // Chunked: only the first chunk, or the end, tells whether the body is empty.
    const onData = (chunk: Buffer) => {
      if (chunk.length === 0) return;
      settle();
      const replay = new PassThrough();
      replay.on('error', () => undefined);
      replay.write(chunk);
      payload.pipe(replay);
      payload.once('error', (error) => replay.destroy(error));
      done(null, replay);
    };
    const onEnd = () => {
      settle();
      delete headers['content-type'];
      delete headers['transfer-encoding'];
      done(null, payload);
    };
    const onError = (error: Error) => {
      settle();
      done(error, payload);
    };
    const settle = () => {
      payload.off('data', onData);
      payload.off('end', onEnd);
      payload.off('error', onError);
      payload.pause();
    };
    payload.on('data', onData);
    payload.once('end', onEnd);
    payload.once('error', onError);
  });
}

/** See installBodilessRoutes. */
export const bodilessPlugin = fp(
  (app, _options, done) => {
    installBodilessRoutes(app);
    done();
  },
  { name: 'focus-bodiless' },
);
