import Fastify, { type FastifyInstance } from 'fastify';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorsPlugin } from './errors.plugin.js';
import { loadWebApp, webPageNotFound, webappPlugin } from './webapp.plugin.js';

const html = { accept: 'text/html,application/xhtml+xml' };

/** A build of the web app in a temporary directory: index.html and one hashed asset. */
function builtWebApp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'focus-web-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>Focus</title>');
  writeFileSync(join(dir, 'assets', 'index-abc123.js'), 'console.log(1)');
  return dir;
}

/** How the built web app is served: caching, client routes, and the server's own paths left alone. */
describe('web app files', () => {
  let dir: string;
  let app: FastifyInstance;

  beforeAll(async () => {
    dir = builtWebApp();
    app = Fastify();
    app.setNotFoundHandler((_request, reply) => reply.code(404).type('application/problem+json').send({ status: 404 }));
    await app.register(webappPlugin, { root: dir });
    app.get('/api/v1/me', () => ({ data: 'api' }));
  });
  afterAll(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves index.html at / for revalidation, with a policy that allows only this origin', async () => {
    const page = await app.inject({ url: '/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(page.headers['content-security-policy']).toMatch(/default-src 'self'.*frame-ancestors 'none'/);
    expect(page.headers['x-frame-options']).toBe('DENY');
    const again = await app.inject({ url: '/', headers: { 'if-none-match': String(page.headers.etag) } });
    expect(again.statusCode).toBe(304);
  });

  it('caches hashed assets for a year', async () => {
    const asset = await app.inject({ url: '/assets/index-abc123.js' });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(asset.body).toBe('console.log(1)');
    expect((await app.inject({ url: '/assets/missing.js', headers: html })).statusCode).toBe(404);
  });

  it('answers the app’s pages with index.html, and leaves every other path to the server', async () => {
    for (const path of ['/week', '/invite', '/invite/abc', '/device?user_code=ABCD-EFGH', '/sessions/new', '/sessions/3?date=2026-12-01', '/settings']) {
      const page = await app.inject({ url: path, headers: html });
      expect(page.statusCode, path).toBe(200);
      expect(page.body).toContain('<title>Focus</title>');
    }
    for (const path of ['/nope', '/week/x', '/api/v1/nope', '/auth/nope', '/oauth/nope', '/docs/nope', '/problems/nope/x', '/ical/x/y']) {
      expect((await app.inject({ url: path, headers: html })).statusCode, path).toBe(404);
    }
    expect((await app.inject({ url: '/api/v1/me', headers: html })).json()).toEqual({ data: 'api' });
  });

  it('says the app is not built, instead of failing, when dist/web is missing', async () => {
    const bare = Fastify();
    await bare.register(webappPlugin, { root: join(dir, 'nowhere') });
    const page = await bare.inject({ url: '/' });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('npm run build');
    await bare.close();
  });
});

/** Through the server's not-found handler: a browser that mistypes an address, and everyone else. */
describe('a page that is not there', () => {
  let dir: string;
  let app: FastifyInstance;

  beforeAll(async () => {
    dir = builtWebApp();
    app = Fastify();
    await app.register(errorsPlugin, { pageNotFound: webPageNotFound(loadWebApp(dir)) });
    await app.register(webappPlugin, { root: dir });
    app.post('/api/v1/things', () => ({ data: 'made' }));
    app.post('/things', () => ({ data: 'made' }));
  });
  afterAll(async () => {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a browser 404 with the app, which says "Page not found"', async () => {
    for (const url of ['/nope', '/week/x', '/sessions/1/x', '/tasks?x=1']) {
      const page = await app.inject({ url, headers: html });
      expect(page.statusCode, url).toBe(404);
      expect(page.headers['content-type'], url).toBe('text/html; charset=utf-8');
      expect(page.headers['cache-control'], url).toBe('no-store');
      expect(page.headers.etag, url).toBeUndefined();
      expect(page.headers['content-security-policy'], url).toMatch(/default-src 'self'/);
      expect(page.body, url).toBe('<!doctype html><title>Focus</title>');
    }
  });

  it('keeps the problem under the server’s own areas, for other methods and for clients that do not ask for HTML', async () => {
    const requests = [
      ...['/api/v1/nope', '/api', '/auth/nope', '/oauth/nope', '/docs/nope', '/problems/nope/x', '/ical/x/y', '/assets/missing.js', '/healthz/x'].map((url) => ({ url, headers: html })),
      { url: '/nope' },
      { url: '/nope', headers: { accept: 'application/json, text/html' } },
      { url: '/nope', method: 'DELETE' as const, headers: html },
    ];
    for (const request of requests) {
      const answer = await app.inject(request);
      expect(answer.statusCode, JSON.stringify(request)).toBe(404);
      expect(answer.headers['content-type'], JSON.stringify(request)).toMatch(/^application\/problem\+json/);
    }
    // A known path with another method stays 405, a browser asking or not.
    for (const url of ['/things', '/api/v1/things']) expect((await app.inject({ url, headers: html })).statusCode, url).toBe(405);
  });
});
