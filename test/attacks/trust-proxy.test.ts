import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../src/features/auth/auth.token.js';
import { type TestDatabase, createTestDatabase } from '../helpers/harness.js';
import { seedUsers } from '../helpers/raw-http.js';
import { type ServerProcess, buildOnce, startServer } from '../helpers/server-process.js';

/*
 * Issue 10, finding 5: with TRUST_PROXY=1 the client-chosen left-most X-Forwarded-For
 * entry became the client address, so rotating it escaped the failed-login limit and
 * spoofing a victim's address spent the victim's budget. Here a real server sits behind
 * a pretend proxy: each request's X-Forwarded-For ends with the address the proxy saw
 * (the attacker's), after whatever the attacker wrote.
 */

const LIMIT = 5;
const ATTACKER = '203.0.113.7';
const VICTIM = '198.51.100.1';

beforeAll(buildOnce, 180_000);

async function me(base: string, token: string, forwardedFor?: string): Promise<number> {
  const res = await fetch(`${base}/api/v1/me`, {
    headers: { authorization: `Bearer ${token}`, ...(forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }) },
  });
  await res.arrayBuffer();
  return res.status;
}

for (const [setting, proxyHop] of [
  ['1', ''],
  ['true', ''],
  // The socket's peer (127.0.0.1) and an internal hop in 10/8 are listed proxies.
  ['127.0.0.1, 10.0.0.0/8', ', 10.1.2.3'],
] as const) {
  describe(`TRUST_PROXY=${setting}`, () => {
    let database: TestDatabase;
    let server: ServerProcess;
    let tokens: Record<string, string>;
    beforeAll(async () => {
      database = await createTestDatabase('sqlite');
      tokens = await seedUsers(database.url, ['victim']);
      server = await startServer({ DATABASE_URL: database.url, RATE_LIMIT: String(LIMIT), TRUST_PROXY: setting });
    }, 60_000);
    afterAll(async () => {
      await server?.stop('SIGKILL');
      await database?.drop();
    });

    it('counts failed logins per real client address, whatever left-most entries the client writes', async () => {
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) {
        // A new forged address each time, and the victim's address as well.
        const forged = i % 2 === 0 ? `10.${i}.0.1` : VICTIM;
        statuses.push(await me(server.url, generateToken(), `${forged}, ${ATTACKER}${proxyHop}`));
      }
      expect(statuses.slice(0, LIMIT)).toEqual(Array(LIMIT).fill(401));
      expect(statuses.slice(LIMIT)).toEqual(Array(20 - LIMIT).fill(429));
      // The victim, whose address the attacker wrote into half of those requests, is unaffected.
      expect(await me(server.url, tokens.victim as string, `${VICTIM}${proxyHop}`)).toBe(200);
    });

    // Found by an operator's audit: behind a proxy that appends `address:port`, each port had a budget of its own.
    it('counts one client once, whatever port or spelling its proxy writes', async () => {
      const client = '203.0.113.9';
      const spellings = [`${client}:1001`, `${client}:1002`, `[::ffff:${client}]`, `[::ffff:${client}]:443`, client, `${client}:1003`, `[::ffff:${client}]:8443`];
      const statuses: number[] = [];
      for (const spelling of spellings) statuses.push(await me(server.url, generateToken(), `${spelling}${proxyHop}`));
      expect(statuses).toEqual([...Array(LIMIT).fill(401), 429, 429]);
    });
  });
}

describe('TRUST_PROXY unset', () => {
  it('ignores X-Forwarded-For: every request counts against the socket peer', async () => {
    const database = await createTestDatabase('sqlite');
    const server = await startServer({ DATABASE_URL: database.url, RATE_LIMIT: String(LIMIT), TRUST_PROXY: '' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < LIMIT + 2; i++) statuses.push(await me(server.url, generateToken(), `10.9.${i}.1`));
      expect(statuses).toEqual([...Array(LIMIT).fill(401), 429, 429]);
    } finally {
      await server.stop('SIGKILL');
      await database.drop();
    }
  }, 60_000);
});
