import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError, badRequest } from '../../toolkit/errors.js';
import { problems } from '../../toolkit/problem.schema.js';
import type { Storage } from '../../storage/database.js';
import { MAX_KEY_LENGTH, parseIdempotencyKey, requestFingerprint } from './idempotency.key.js';
import { type Claim, type IdempotencyRepository, createIdempotencyRepository } from './idempotency.repository.js';

/*
 * Safe retries of POST (contract section 7). With an Idempotency-Key, the first request
 * claims (user, key) in the database before its handler runs; its completed response
 * (status, body, Location) is stored with the claim and kept 24 h. A retry with the same
 * key and the same request gets that response again with `Idempotent-Replayed: true` and
 * writes nothing; the same key for another request is 422; a retry while the first is
 * still running is 409. The database is the only state, so every instance agrees.
 *
 * A claim whose request never completes (its instance crashed) is abandoned after
 * CLAIM_LEASE_MS; a retry then runs the request again. A response with a 5xx status is
 * not kept: the failure was ours, and the retry should run.
 */

export const KEEP_MS = 24 * 3_600_000;
export const CLAIM_LEASE_MS = 60_000;
/** Expired keys are deleted at most this often per instance, at most PURGE_BATCH at a time. */
const PURGE_INTERVAL_MS = 60_000;
const PURGE_BATCH = 1_000;

export const invalidKey = () =>
  badRequest(`Idempotency-Key must be 1–${MAX_KEY_LENGTH} printable ASCII characters, bare or as a quoted string ("…").`);

export const keyInFlight = () =>
  new ApiError(409, 'idempotency-key-in-flight', 'Conflict', 'A request with this Idempotency-Key is still running; retry shortly.', undefined, {
    'retry-after': '1',
  });

export const keyReused = () =>
  new ApiError(
    422,
    'idempotency-key-reused',
    'Idempotency key reused',
    'This Idempotency-Key was used in the last 24 h for a different request (method, path or body); use a new key.',
  );

// Documentation only: no length or pattern here, so that every malformed key gets the plugin's one 400.
const KEY_HEADER = {
  type: 'string',
  description:
    'Makes this POST safe to retry: 1–255 printable ASCII characters, bare or as a structured-field string (`"…"`). ' +
    'The first completed response is kept 24 h per user and key; a retry with the same key and body gets it again with ' +
    '`Idempotent-Replayed: true` and writes nothing. The same key with another request is 422 `idempotency-key-reused`; ' +
    'a retry while the first is still running is 409 `idempotency-key-in-flight`.',
} as const;

const REPLAYED_HEADER = {
  'Idempotent-Replayed': { type: 'string', enum: ['true'], description: 'Present when this is the stored response to an earlier request with the same Idempotency-Key.' },
} as const;

/** Adds the header, the replay marker and the refusals to a POST route's OpenAPI description. */
function describe(route: RouteOptions): void {
  const schema = (route.schema ??= {});
  const headers = (schema.headers ?? { type: 'object', properties: {} }) as { properties?: Record<string, unknown> };
  schema.headers = { ...headers, properties: { ...headers.properties, 'idempotency-key': KEY_HEADER } };
  const responses = { ...((schema.response ?? {}) as Record<string, Record<string, unknown>>) };
  for (const [code, response] of Object.entries(responses)) {
    if (code.startsWith('2')) responses[code] = { ...response, headers: { ...(response.headers as object | undefined), ...REPLAYED_HEADER } };
  }
  for (const code of [400, 409, 422] as const) responses[code] ??= problems[code];
  schema.response = responses;
}

const claims = new WeakMap<FastifyRequest, Claim>();

async function claimOrReplay(repo: IdempotencyRepository, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  const header = request.headers['idempotency-key'];
  // A body the request schema refused (routes that collect schema errors still reach here)
  // runs nothing worth keeping: like every other refusal before the handler, it claims no key.
  if (request.method !== 'POST' || header === undefined || request.validationError !== undefined) return undefined;
  const key = typeof header === 'string' ? parseIdempotencyKey(header) : undefined;
  if (key === undefined) throw invalidKey();
  const takesBody = request.routeOptions.schema?.body !== undefined;
  const fingerprint = requestFingerprint(request.method, request.url, takesBody ? (request.body ?? null) : undefined);
  const now = Date.now();
  const claim: Claim = {
    userId: request.user.id,
    key,
    fingerprint,
    claimedAt: new Date(now).toISOString(),
    expiresAt: new Date(now + KEEP_MS).toISOString(),
  };
  // Two rounds at most: a row that vanishes (purged) or is taken over between reads is read again.
  for (let round = 0; round < 2; round++) {
    if (await repo.insertClaim(claim)) {
      claims.set(request, claim);
      return undefined;
    }
    const row = await repo.findKey(claim.userId, key);
    if (row === undefined) continue;
    const expired = Date.parse(row.expires_at) <= now;
    const abandoned = row.status === null && Date.parse(row.claimed_at) <= now - CLAIM_LEASE_MS;
    if (expired || abandoned) {
      if (await repo.replaceClaim(row, claim)) {
        claims.set(request, claim);
        return undefined;
      }
      continue;
    }
    if (row.fingerprint !== fingerprint) throw keyReused();
    if (row.status === null || row.body === null) throw keyInFlight();
    reply.code(row.status).header('idempotent-replayed', 'true');
    if (row.location !== null) reply.header('location', row.location);
    if (row.content_type !== null) reply.header('content-type', row.content_type);
    return reply.send(row.body);
  }
  throw keyInFlight();
}

async function storeResponse(repo: IdempotencyRepository, request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<void> {
  const claim = claims.get(request);
  if (claim === undefined) return;
  claims.delete(request);
  try {
    if (reply.statusCode >= 500 || typeof payload !== 'string') {
      await repo.releaseClaim(claim);
      return;
    }
    const header = (name: string) => {
      const value = reply.getHeader(name);
      return value === undefined ? null : String(value);
    };
    await repo.completeClaim(
      claim,
      { status: reply.statusCode, contentType: header('content-type'), location: header('location'), body: payload },
      new Date(Date.now() + KEEP_MS).toISOString(),
    );
  } catch (error) {
    // The response itself is fine; a retry meets an in-flight claim until the lease ends.
    request.log.warn({ err: error }, 'could not store the response of an idempotent request');
  }
}

/**
 * Idempotency-Key on every POST of the scope it is registered in (after authentication:
 * keys are per user). Registered with fastify-plugin, so its hooks apply to that scope.
 */
export const idempotencyPlugin = fp(
  (app: FastifyInstance, { storage }: { storage: Storage }, done: (error?: Error) => void) => {
    const repo = createIdempotencyRepository(storage);
    let lastPurge = 0;
    app.addHook('onRoute', (route) => {
      if ([route.method].flat().includes('POST')) describe(route);
    });
    app.addHook('preHandler', (request, reply) => claimOrReplay(repo, request, reply));
    app.addHook('onSend', async (request, reply, payload) => {
      await storeResponse(repo, request, reply, payload);
      return payload;
    });
    app.addHook('onResponse', async (request) => {
      if (request.headers['idempotency-key'] === undefined || Date.now() - lastPurge < PURGE_INTERVAL_MS) return;
      lastPurge = Date.now();
      await repo.purgeExpired(new Date().toISOString(), PURGE_BATCH).catch((error: unknown) => {
        request.log.warn({ err: error }, 'could not purge expired idempotency keys');
      });
    });
    done();
  },
  { name: 'focus-idempotency', fastify: '5.x', dependencies: ['focus-auth'] },
);
