import { createHash } from 'node:crypto';
import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Redis } from 'ioredis';
import { addressOnly } from '../config/trust-proxy.js';
import { bearerToken } from '../features/auth/auth.token.js';
import { rateLimited } from '../toolkit/errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route counts a known credential of its own (a feed secret) on its own budget: its onRequest hook sets `rateLimitSubject`. */
    rateLimitSubject?: boolean;
  }
  interface FastifyRequest {
    /** `<policy>:<key>` of the budget this request counts on, set by a route with `rateLimitSubject`; never a secret itself. */
    rateLimitSubject: string | null;
  }
}

/*
 * Budgets of RATE_LIMIT requests per minute, counted by @fastify/rate-limit
 * (in memory, or in Redis so that every instance shares one budget):
 *
 * - "token": requests whose bearer token was accepted, keyed by a hash of the token.
 * - "feed": calendar-feed fetches with a known secret, keyed by the secret's hash: one
 *   polled or hammered feed never spends the budget of the address it is fetched from
 *   (other users behind it), nor another feed's.
 * - "address": everything else — requests without a token, and failed
 *   authentications (malformed, unknown, expired, revoked) — keyed by client address.
 *
 * A request that carries a token is checked against its address's budget before
 * the token is looked up: once an address has used its budget, every request from
 * it answers 429 whatever its token, so guessing tokens costs as much as any other
 * request and the answer says nothing about whether a token exists.
 *
 * /healthz and /readyz are exempt: probes must never be throttled, and they are cheap.
 */

export const RATE_WINDOW_SECONDS = 60;
/** Paths no budget applies to (and whose answers carry no RateLimit headers). */
export const RATE_LIMIT_EXEMPT: ReadonlySet<string> = new Set(['/healthz', '/readyz']);

export interface RateLimitOptions {
  /** Requests per window per token (and per address); 0 turns limiting off. */
  max: number;
  /** Share the counters through Redis; null keeps them in this process. */
  redisUrl: string | null;
}

type Policy = string;

interface Count {
  policy: Policy;
  remaining: number;
  resetSeconds: number;
}

/** The token's key never contains the token: a Redis dump must not hand out credentials. */
function tokenKey(request: FastifyRequest): string | undefined {
  const user: unknown = request.user;
  if (user === null || user === undefined) return undefined;
  const token = bearerToken(request.headers.authorization);
  if (token === undefined) return undefined;
  return `token:${createHash('sha256').update('focus-rate-limit\u0000').update(token).digest('base64url')}`;
}

const addressKey = (request: FastifyRequest) => `address:${normalizeIP(addressOnly(request.ip))}`;

async function openRedis(app: FastifyInstance, url: string): Promise<Redis> {
  const redis = new Redis(url, {
    lazyConnect: true,
    // A slow or absent Redis must not stall requests: fail fast, and fail open (skipOnError).
    connectTimeout: 2_000,
    commandTimeout: 500,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
  });
  redis.on('error', (error: Error) => app.log.warn({ err: error }, 'rate-limit store (Redis) error'));
  try {
    await redis.connect();
  } catch (error) {
    app.log.warn({ err: error }, 'rate-limit store (Redis) unreachable; limits are not enforced until it is back');
  }
  app.addHook('onClose', async () => {
    await redis.quit().catch(() => redis.disconnect());
  });
  return redis;
}

/**
 * The limiter, on the root instance before any route. Its address check runs before the
 * auth plugin's token lookup (an instance hook runs before the route hook auth adds), and
 * its token budget reads the caller auth resolved: hence the dependency.
 */
export const rateLimitPlugin = fp(registerRateLimit, { name: 'focus-rate-limit', dependencies: ['focus-auth'] });

async function registerRateLimit(app: FastifyInstance, options: RateLimitOptions): Promise<void> {
  app.decorateRequest('rateLimitSubject', null);
  if (options.max === 0) return;
  const redis = options.redisUrl === null ? undefined : await openRedis(app, options.redisUrl);
  await app.register(rateLimit, {
    global: false,
    skipOnError: true,
    ...(redis === undefined ? {} : { redis, nameSpace: 'focus-rate-limit:' }),
  });
  const limiter = app.createRateLimit({
    max: options.max,
    timeWindow: RATE_WINDOW_SECONDS * 1000,
    skipOnError: true,
    keyGenerator: (request) => request.rateLimitSubject ?? tokenKey(request) ?? addressKey(request),
  });
  const counts = new WeakMap<FastifyRequest, Count>();
  const exempt = (request: FastifyRequest) => RATE_LIMIT_EXEMPT.has(request.url.split('?')[0] ?? '');

  const record = (request: FastifyRequest, policy: Policy, outcome: Awaited<ReturnType<typeof limiter>>): Count => {
    const count: Count = outcome.isAllowed
      ? { policy, remaining: options.max, resetSeconds: RATE_WINDOW_SECONDS }
      : { policy, remaining: outcome.remaining, resetSeconds: Math.max(outcome.ttl > 0 ? 1 : 0, outcome.ttlInSeconds) };
    counts.set(request, count);
    return count;
  };

  const spend = async (request: FastifyRequest, policy: Policy): Promise<void> => {
    const outcome = await limiter(request);
    const count = record(request, policy, outcome);
    if (!outcome.isAllowed && outcome.isExceeded) throw rateLimited(Math.max(1, count.resetSeconds));
  };

  app.addHook('onRequest', async (request) => {
    if (exempt(request)) return;
    const ownSubject = request.routeOptions.config.rateLimitSubject === true;
    if (request.headers.authorization === undefined && !ownSubject) return spend(request, 'address');
    // Peek only: a valid token (or feed secret) spends its own budget once it is known to be valid.
    const outcome = await limiter(request, { increment: false });
    if (!outcome.isAllowed && outcome.remaining === 0 && outcome.ttl > 0) {
      const count = record(request, 'address', outcome);
      throw rateLimited(Math.max(1, count.resetSeconds));
    }
  });

  // After every onRequest hook (authentication included), before the body is read.
  app.addHook('preParsing', async (request) => {
    if (exempt(request) || counts.has(request)) return;
    const subject = request.rateLimitSubject?.split(':')[0];
    await spend(request, subject ?? (tokenKey(request) === undefined ? 'address' : 'token'));
  });

  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply) => {
    if (exempt(request)) return;
    let count = counts.get(request);
    // Failed authentication (or an unknown feed secret) never reaches preParsing; it is charged to the address here.
    if (count === undefined) {
      count = record(request, 'address', await limiter(request));
    }
    reply.header('ratelimit-policy', `"${count.policy}";q=${options.max};w=${RATE_WINDOW_SECONDS}`);
    reply.header('ratelimit', `"${count.policy}";r=${count.remaining};t=${count.resetSeconds}`);
  });
}
