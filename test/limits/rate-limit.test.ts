import { randomInt } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app/app.js';
import { generateToken } from '../../src/features/auth/auth.token.js';
import { createAuthService } from '../../src/features/auth/auth.service.js';
import { createTestApp, describeEachDialect, testConfig, useTestApp } from '../helpers/harness.js';

/** A fresh client address per test, so budgets never leak between tests or runs sharing Redis. */
const address = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

async function call(app: FastifyInstance, url: string, token: string | undefined, remoteAddress: string) {
  const res = await app.inject({
    method: 'GET',
    url,
    remoteAddress,
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
  return { status: res.statusCode, headers: res.headers, body: res.body === '' ? undefined : (JSON.parse(res.body) as Record<string, unknown>) };
}

const LIMIT = 5;

describeEachDialect('rate limits (memory store)', (dialect) => {
  const t = useTestApp(dialect, {}, { RATE_LIMIT: String(LIMIT) });

  it('counts each token on its own budget and answers 429 problem+json with Retry-After and RateLimit headers', async () => {
    const alice = await t.user('alice', [1]);
    const ip = address();
    for (let i = 1; i <= LIMIT; i++) {
      const res = await call(t.app, '/api/v1/me', alice.token, ip);
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit-policy']).toBe(`"token";q=${LIMIT};w=60`);
      expect(res.headers.ratelimit).toMatch(new RegExp(`^"token";r=${LIMIT - i};t=\\d+$`));
    }
    const limited = await call(t.app, '/api/v1/me', alice.token, ip);
    expect(limited.status).toBe(429);
    expect(limited.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(limited.body).toMatchObject({ status: 429, type: expect.stringMatching(/\/problems\/rate-limited$/) });
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers.ratelimit).toBe(`"token";r=0;t=${retryAfter}`);

    // Another token (even of the same user, from the same address) has its own budget.
    const second = await t.user('alice', [1]);
    expect((await call(t.app, '/api/v1/me', second.token, ip)).status).toBe(200);
  });

  it('counts anonymous requests per address; health and readiness are exempt', async () => {
    const ip = address();
    for (let i = 0; i < LIMIT; i++) expect((await call(t.app, '/api/v1/openapi.json', undefined, ip)).status).toBe(200);
    const limited = await call(t.app, '/api/v1/openapi.json', undefined, ip);
    expect(limited.status).toBe(429);
    expect(limited.headers['ratelimit-policy']).toBe(`"address";q=${LIMIT};w=60`);
    for (let i = 0; i < LIMIT * 2; i++) {
      const health = await call(t.app, '/healthz', undefined, ip);
      expect(health.status).toBe(200);
      expect(health.headers.ratelimit).toBeUndefined();
      expect((await call(t.app, '/readyz', undefined, ip)).status).toBe(200);
    }
    // Another address is unaffected.
    expect((await call(t.app, '/api/v1/openapi.json', undefined, address())).status).toBe(200);
  });

  it('charges failed authentications to the address, and then refuses every token from it alike', async () => {
    const bob = await t.user('bob', [1]);
    const revoked = await t.user('bob', [1]);
    await createAuthService(t.storage).revokeToken(revoked.tokenId);
    const expired = await t.user('bob', [1], { ttl: '1s' });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const ip = address();
    const failures = [generateToken(), revoked.token as string, expired.token as string, 'not-a-token', `${generateToken().slice(0, -1)}x`];
    const answers: { status: number; www: unknown; policy: unknown; detail: unknown }[] = [];
    for (const token of failures) {
      const res = await call(t.app, '/api/v1/me', token, ip);
      answers.push({ status: res.status, www: res.headers['www-authenticate'], policy: res.headers['ratelimit-policy'], detail: res.body?.detail });
    }
    // Unknown, revoked and expired tokens are indistinguishable (malformed ones differ only in detail text).
    expect(answers.slice(0, 3).every((a) => JSON.stringify(a) === JSON.stringify(answers[0]))).toBe(true);
    expect(answers.every((a) => a.status === 401 && a.policy === `"address";q=${LIMIT};w=60`)).toBe(true);

    // The address has spent its budget: a valid token gets exactly what an unknown one gets.
    const valid = await call(t.app, '/api/v1/me', bob.token, ip);
    const unknown = await call(t.app, '/api/v1/me', generateToken(), ip);
    expect(valid.status).toBe(429);
    expect(unknown.status).toBe(429);
    expect({ ...valid.body, instance: null }).toEqual({ ...unknown.body, instance: null });
    expect(valid.headers['ratelimit-policy']).toBe(unknown.headers['ratelimit-policy']);
    // From another address the valid token still works.
    expect((await call(t.app, '/api/v1/me', bob.token, address())).status).toBe(200);
  });

  it('turns off with RATE_LIMIT=0', async () => {
    const off = await createTestApp(dialect);
    try {
      const carol = await off.user('carol', [1]);
      for (let i = 0; i < 20; i++) {
        const res = await carol.get('/api/v1/me');
        expect(res.status).toBe(200);
        expect(res.headers.ratelimit).toBeUndefined();
      }
    } finally {
      await off.close();
    }
  });
});

const redisUrl = process.env.TEST_REDIS_URL;

describe.skipIf(redisUrl === undefined)('rate limits shared through Redis', () => {
  const t = useTestApp('sqlite', {}, { RATE_LIMIT: String(LIMIT), REDIS_URL: redisUrl as string });
  let second: FastifyInstance;
  let redis: Redis;
  beforeAll(async () => {
    // A second instance on the same database and Redis, as behind a load balancer.
    second = await buildApp({ config: testConfig(t.url, { RATE_LIMIT: String(LIMIT), REDIS_URL: redisUrl as string }), storage: t.storage, logger: false });
    await second.ready();
    redis = new Redis(redisUrl as string);
  });
  afterAll(async () => {
    redis.disconnect();
    await second.close();
  });

  it('makes all instances share one budget per token, keyed by a hash and never the token', async () => {
    const dave = await t.user('dave', [1]);
    const ip = address();
    for (let i = 0; i < LIMIT; i++) {
      const res = await call(i % 2 === 0 ? t.app : second, '/api/v1/me', dave.token, ip);
      expect(res.status).toBe(200);
      expect(res.headers.ratelimit).toMatch(new RegExp(`^"token";r=${LIMIT - 1 - i};`));
    }
    expect((await call(second, '/api/v1/me', dave.token, ip)).status).toBe(429);
    expect((await call(t.app, '/api/v1/me', dave.token, ip)).status).toBe(429);

    const keys = await redis.keys('focus-rate-limit:*');
    expect(keys.length).toBeGreaterThan(0);
    const secret = (dave.token as string).slice('fst_'.length);
    expect(keys.some((k) => k.includes(secret))).toBe(false);
    for (const key of keys) expect(await redis.get(key)).not.toContain(secret);
  });

  it('shares the per-address budget for anonymous requests', async () => {
    const ip = address();
    for (let i = 0; i < LIMIT; i++) expect((await call(i % 2 === 0 ? second : t.app, '/api/v1/openapi.json', undefined, ip)).status).toBe(200);
    expect((await call(t.app, '/api/v1/openapi.json', undefined, ip)).status).toBe(429);
  });

  it('fails open when Redis is unreachable instead of failing requests', async () => {
    const broken = await buildApp({ config: testConfig(t.url, { RATE_LIMIT: '1', REDIS_URL: 'redis://127.0.0.1:1' }), storage: t.storage, logger: false });
    try {
      const erin = await t.user('erin', [1]);
      for (let i = 0; i < 3; i++) expect((await call(broken, '/api/v1/me', erin.token, address())).status).toBe(200);
    } finally {
      await broken.close();
    }
  });
});
