import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import fp from 'fastify-plugin';
import { PACKAGE } from '../config/config.package.js';
import { API_PREFIX } from '../toolkit/api.js';
import { problemResponses } from '../toolkit/problem.schema.js';
import { type Components, documentedRoute, finishedDocument } from './openapi.document.js';
import { webhooksSection } from './openapi.webhooks.js';
import { RATE_LIMIT_EXEMPT } from './rate-limit.plugin.js';

/** Focus's mark: a ring around a dot, for the docs page's logo and icon. */
const FOCUS_MARK = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32" width="32" height="32"><title>Focus</title>' +
    '<circle cx="16" cy="16" r="13" fill="none" stroke="#2b6cb0" stroke-width="4"/><circle cx="16" cy="16" r="5" fill="#2b6cb0"/></svg>',
);

/** The document's tags, in the order the reference shows them. */
const TAGS = [
  { name: 'sessions', description: 'Focus sessions, recurrence and participation' },
  { name: 'tasks', description: 'Tasks and bulk import' },
  { name: 'stats', description: 'Focus statistics: minutes, sessions, tasks and streaks' },
  { name: 'webhooks', description: 'Webhooks: the events you may see, POSTed and signed (Standard Webhooks 1.0)' },
  { name: 'auth', description: 'The authenticated user' },
  { name: 'sign-in', description: 'Signing in with a password and accepting invitations (the web app)' },
  { name: 'people', description: "An org's members and invitations (admins)" },
  { name: 'tokens', description: 'Your personal tokens and connected apps' },
  { name: 'oauth', description: 'Approving or denying an app that asked for a device code' },
  { name: 'calendar', description: 'Calendar feeds: your sessions as an iCalendar subscription' },
  { name: 'sync', description: 'The change feed and the live event stream' },
  { name: 'operations', description: 'Health, readiness and this document' },
];

/**
 * The OpenAPI 3.1 document, generated from the schemas every route validates with, at
 * `/api/v1/openapi.json`, and the docs page at `/docs`. Registered before the routes so
 * that it sees each one as it is added.
 */
export const openapiPlugin = fp(
  async (app) => {
    const components: Components = new Map();

    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Focus API',
          version: PACKAGE.version,
          summary: 'Timed focus sessions and the tasks people commit to in them.',
          description:
            'Timed focus sessions (one-off or recurring) in organizations, who joins them, and the tasks people commit to in them, ' +
            'imported in bulk from Todoist, Linear, Jira or GitHub. Every request but the probes and this document needs a bearer token ' +
            '(`npx focus tokens issue <handle>`). Success bodies are `{"data": …}`; errors are RFC 9457 problem+json.',
          contact: { name: PACKAGE.author },
          license: { name: PACKAGE.license, identifier: PACKAGE.license },
        },
        servers: [{ url: '/', description: 'This server.' }],
        components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An `fst_` token from `npx focus tokens issue`.' } } },
        security: [{ bearer: [] }],
        tags: TAGS,
      },
      transform: ({ schema, url }) => ({ schema: documentedRoute(schema as Record<string, unknown>, components), url }),
      // Always an OpenAPI (not Swagger 2) document here: the `openapi` option above says so.
      transformObject: (document) => {
        const doc = (document as { openapiObject: Record<string, unknown> }).openapiObject;
        // The OpenAPI 3.1 `webhooks` section: what each event's POST to a receiver carries.
        return finishedDocument({ ...doc, webhooks: webhooksSection(components) }, components, (path) => !RATE_LIMIT_EXEMPT.has(path));
      },
    });
    // The page reads the document from its documented address (the plugin's default is /docs/json).
    await app.register(swaggerUi, {
      routePrefix: '/docs',
      uiConfig: { deepLinking: true, validatorUrl: null, urls: [{ url: `${API_PREFIX}/openapi.json`, name: 'Focus API' }] },
      // The project's own name and mark, not the framework's.
      theme: { title: 'Focus API', favicon: [{ filename: 'focus.svg', rel: 'icon', sizes: 'any', type: 'image/svg+xml', content: FOCUS_MARK }] },
      logo: { type: 'image/svg+xml', content: FOCUS_MARK, href: '/docs', target: '_self' },
      // The page loads only from this server and may be framed nowhere (clickjacking: Authorize holds a token).
      staticCSP: true,
      transformStaticCSP: (header) =>
        header
          .replace("frame-ancestors 'self'", "frame-ancestors 'none'")
          .replace(' validator.swagger.io', '')
          .replace("font-src 'self' https: data:", "font-src 'self' data:")
          // Swagger UI sets style attributes; scripts stay strictly 'self'.
          .replace(/style-src 'self' https: [^;]*;/, "style-src 'self' 'unsafe-inline';")
          // The server may be served over plain http (127.0.0.1): nothing to upgrade to.
          .replace(' upgrade-insecure-requests;', ''),
      uiHooks: {
        onRequest: (_request, reply, done) => {
          reply.header('x-frame-options', 'DENY');
          done();
        },
      },
    });

    let serialized: string | undefined;
    app.get(
      `${API_PREFIX}/openapi.json`,
      {
        schema: {
          tags: ['operations'],
          operationId: 'getOpenApiDocument',
          summary: 'This OpenAPI 3.1 document',
          description: 'The OpenAPI 3.1 description of this API, generated from the schemas that validate its requests. No token needed.',
          security: [],
          response: {
            200: {
              description: 'The OpenAPI 3.1 document of this API.',
              type: 'object',
              additionalProperties: true,
            },
            ...problemResponses(429),
          },
        },
      },
      // The document never changes while the process runs: serialized once, not per request
      // (7.7 ms each, so a client pipelining a few hundred held the event loop for seconds).
      (_request, reply) => reply.type('application/json; charset=utf-8').send((serialized ??= JSON.stringify(app.swagger()))),
    );
  },
  { name: 'focus-openapi' },
);
