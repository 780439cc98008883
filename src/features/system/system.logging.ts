import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';

/** Probed every few seconds by load balancers and orchestrators: their lines would drown the rest. */
export const PROBE_URLS: ReadonlySet<string> = new Set(['/healthz', '/readyz']);

const isProbe = (request: FastifyRequest) => PROBE_URLS.has(request.routeOptions.url ?? '');

/**
 * Fastify's request log lines, at debug instead of info for the health probes. A probe that
 * fails still says so: readiness failures are logged as warnings where they happen.
 */
export class ProbeQuietLogController extends LogController {
  override incomingRequest(request: FastifyRequest, reply: FastifyReply, metadata?: Record<string, unknown>): void {
    if (!isProbe(request)) return super.incomingRequest(request, reply, metadata);
    if (!this.isLogDisabled(request)) request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
    metadata?: Record<string, unknown>,
  ): void {
    if (error || !isProbe(request)) return super.requestCompleted(error, request, reply, metadata);
    if (!this.isLogDisabled(request)) reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}
