import { type AddressInfo, type Socket, createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createTestApp } from '../../../test/helpers/harness.js';

// In the slow project: it waits out the OpenID Connect client's 2 s timeout twice, on the wall clock.
describe('single sign-on with a provider that never answers', () => {
  it('gives up after 2 s per call and sends the browser back to the sign-in page; the next attempt discovers again', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => void sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const issuer = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const t = await createTestApp('sqlite', { OIDC_ISSUER: issuer, OIDC_CLIENT_ID: 'focus', OIDC_CLIENT_SECRET: 'secret' });
    try {
      for (let attempt = 1; attempt <= 2; attempt += 1) {
        const started = performance.now();
        const res = await t.anonymous.get('/auth/oidc/start');
        const took = performance.now() - started;
        expect(res.status).toBe(302);
        expect(res.headers.location).toBe('/sign-in?error=sso');
        expect(took).toBeGreaterThan(1_900);
        expect(took).toBeLessThan(3_000);
      }
      expect(sockets.size).toBeGreaterThanOrEqual(2);
    } finally {
      await t.close();
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  }, 15_000);
});
