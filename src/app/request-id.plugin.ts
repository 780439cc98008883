import { randomUUID } from 'node:crypto';
import type { FastifyServerOptions } from 'fastify';
import fp from 'fastify-plugin';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * A client's x-request-id is kept only when it is short and plain, so it cannot forge
 * log lines. Pass as the `genReqId` server option (with `requestIdHeader: false`).
 */
export const genReqId: NonNullable<FastifyServerOptions['genReqId']> = (req) => {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
};

/** Every response names its request, so a client can quote it and we can find it in the logs. */
export const requestIdPlugin = fp(
  (app, _options, done) => {
    app.addHook('onSend', async (request, reply) => {
      reply.header('x-request-id', request.id);
    });
    done();
  },
  { name: 'focus-request-id' },
);
