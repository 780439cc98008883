import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { extname, join } from 'node:path';
import { PACKAGE_ROOT } from '../config/config.variables.js';

/*
 * The web app (contract section 12) at `/`: the files Vite built into dist/web at install,
 * read once at start-up (about 60 KB) and served from memory. Hashed assets are cached for
 * a year; index.html is revalidated, so a new build is picked up on the next visit. The
 * app's own page paths answer index.html (it routes on the client); they are listed, not
 * caught by a wildcard, so every other path keeps the server's 404 and 405 problems, but
 * for a browser's GET outside the server's own areas (webPageNotFound).
 */

export const WEB_ROOT = join(PACKAGE_ROOT, 'dist', 'web');

/** The pages of web/src/main.tsx: each is index.html, opened or reloaded in a browser. */
export const WEB_PAGES = ['/', '/week', '/now', '/stats', '/settings', '/sign-in', '/invite', '/invite/:secret', '/device', '/sessions/new', '/sessions/:id'] as const;

const HTML = 'text/html; charset=utf-8';

const TYPES: Record<string, string> = {
  '.html': HTML,
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

/** Only this origin's scripts, styles and connections; framed nowhere. */
export const WEB_SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
} as const;

interface WebFile {
  body: Buffer;
  type: string;
  etag: string;
  cache: string;
}

function loadFiles(root: string): Map<string, WebFile> {
  const files = new Map<string, WebFile>();
  for (const name of readdirSync(root, { recursive: true, encoding: 'utf8' })) {
    const path = `/${name.split('\\').join('/')}`;
    const type = TYPES[extname(path)];
    if (type === undefined) continue;
    const body = readFileSync(join(root, name));
    // Vite puts a content hash in every name under /assets/: such a URL never changes content.
    const cache = path.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache';
    files.set(path, { body, type, cache, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` });
  }
  return files;
}

function send(request: FastifyRequest, reply: FastifyReply, file: WebFile) {
  reply.headers(WEB_SECURITY_HEADERS).header('cache-control', file.cache).header('etag', file.etag).type(file.type);
  const match = request.headers['if-none-match'];
  if (match !== undefined && match.split(',').some((tag) => tag.trim() === file.etag)) return reply.code(304).send();
  return reply.send(file.body);
}

const NOT_BUILT =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Focus</title></head><body><h1>Focus</h1>' +
  '<p>The web app is not built: run <code>npm run build</code> (with devDependencies). The API is at <a href="/docs">/docs</a>.</p></body></html>';

const NOT_BUILT_PAGE: WebFile = { body: Buffer.from(NOT_BUILT), type: HTML, cache: 'no-cache', etag: '"not-built"' };

/** The server's own areas: an unknown path under one keeps its problem, whoever asks. */
const SERVER_AREAS = /^\/(api|auth|oauth|docs|problems|ical|assets|healthz|readyz|\.well-known)(\/|\?|$)/;

/**
 * For the server's not-found handler: a browser navigating (it asks for HTML first) to an
 * address outside the server's areas gets 404 with the app, which says "Page not found" and
 * links home, rather than a JSON problem. Answers undefined for any other request.
 */
export function webPageNotFound({ index }: WebApp = loadWebApp()): (request: FastifyRequest, reply: FastifyReply) => FastifyReply | undefined {
  return (request, reply) => {
    if (request.method !== 'GET' || !(request.headers.accept ?? '').startsWith('text/html') || SERVER_AREAS.test(request.url)) return undefined;
    // Neither cached nor tagged: the address may be a page of a later version.
    return reply.code(404).headers(WEB_SECURITY_HEADERS).header('cache-control', 'no-store').type(index.type).send(index.body);
  };
}

/** A build of the web app, read once: its files by path, and its index.html (or the "not built" page). */
export interface WebApp {
  files: ReadonlyMap<string, WebFile>;
  index: WebFile;
}

export function loadWebApp(root: string = WEB_ROOT): WebApp {
  const files = existsSync(join(root, 'index.html')) ? loadFiles(root) : new Map<string, WebFile>();
  return { files, index: files.get('/index.html') ?? NOT_BUILT_PAGE };
}

/** Registers the pages and `GET /assets/:file`; pass the build read once (the app's), or `root` to read another (tests). */
export const webappPlugin: FastifyPluginAsync<{ root?: string; web?: WebApp }> = (app, options) => {
  const { files, index } = options.web ?? loadWebApp(options.root);
  for (const page of WEB_PAGES) app.get(page, { schema: { hide: true } }, (request, reply) => send(request, reply, index));
  app.get('/assets/:file', { schema: { hide: true } }, (request, reply) => {
    const file = files.get(`/assets/${(request.params as { file: string }).file}`);
    return file === undefined ? reply.callNotFound() : send(request, reply, file);
  });
  return Promise.resolve();
};
