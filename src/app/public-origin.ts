import type { FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyInstance {
    /** PUBLIC_URL without a trailing slash, or null: where this server is reached from outside. */
    readonly publicUrl: string | null;
  }
}

/** A Host header value that is a host name or bracketed IPv6 address with an optional port, nothing more. */
const PLAIN_HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/**
 * The origin absolute links in answers start with (a problem's `type`): PUBLIC_URL when set,
 * else the request's own scheme and Host (the address the client used, so the link works
 * for it), else "" and the link is relative. A Host that is not a plain host[:port] is not
 * echoed into a URI.
 */
export function requestOrigin(request: FastifyRequest): string {
  const configured = request.server.publicUrl;
  if (configured !== null && configured !== undefined) return configured;
  const host = request.host;
  return typeof host === 'string' && PLAIN_HOST.test(host) ? `${request.protocol}://${host}` : '';
}
