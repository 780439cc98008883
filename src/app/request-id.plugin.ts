import type { FastifyServerOptions } from 'fastify';
import fp from 'fastify-plugin';
import { requestIdFrom } from './log-redaction.js';

/**
 * A client's x-request-id is kept only when it can be neither a secret nor a forged log
 * line (requestIdFrom). Pass as the `genReqId` server option (with `requestIdHeader: false`).
 */
export const genReqId: NonNullable<FastifyServerOptions['genReqId']> = (req) => requestIdFrom(req.headers['x-request-id']);

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
