import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { PROBLEMS, PROBLEM_PATH, type ProblemKind, type ProblemSlug } from '../toolkit/problem.catalog.js';
import { Named } from '../toolkit/openapi.js';
import { problemResponses } from '../toolkit/problem.schema.js';
import { StringEnum } from '../toolkit/schema-helpers.js';

/*
 * The page each problem `type` names (contract section 14): a short human page per kind of
 * problem, from the catalog, served where the URI points. Static text; served with a
 * policy that lets it load nothing and be framed nowhere.
 */

/** What a page may do: show its own inline style, nothing else; no framing. */
export const PAGE_SECURITY_HEADERS = {
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
} as const;

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
/** Catalog text: escaped, with `code` spans kept. */
const prose = (text: string) => escape(text).replace(/`([^`]+)`/g, '<code>$1</code>');

const STYLE = 'body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#222}code{background:#f2f2f2;padding:0 .2em}';

function page(title: string, body: string): string {
  return (
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>${escape(title)} · Focus API</title><style>${STYLE}</style></head>\n<body>\n${body}\n</body></html>\n`
  );
}

export function problemPage(slug: ProblemSlug, kind: ProblemKind = PROBLEMS[slug]): string {
  return page(
    kind.title,
    `<p><a href="${PROBLEM_PATH.slice(0, -1)}">Focus API problems</a></p>\n<h1>${escape(kind.title)}</h1>\n` +
      `<p>HTTP status <strong>${kind.status}</strong>; <code>type</code> ends in <code>${PROBLEM_PATH}${slug}</code>.</p>\n` +
      `<h2>When it happens</h2>\n<p>${prose(kind.when)}</p>\n<h2>What to do</h2>\n<p>${prose(kind.todo)}</p>\n` +
      `<p>Every error answer of the Focus API is RFC 9457 problem+json: <code>type</code> (this page), <code>title</code>, ` +
      '<code>status</code>, <code>detail</code>, <code>instance</code>, and <code>errors</code> on a 422. The API reference is at <a href="/docs">/docs</a>.</p>',
  );
}

export function problemIndex(): string {
  const items = (Object.entries(PROBLEMS) as [ProblemSlug, ProblemKind][]).map(
    ([slug, kind]) => `<li><a href="${PROBLEM_PATH}${slug}">${escape(kind.title)}</a> (${kind.status}, <code>${slug}</code>)</li>`,
  );
  return page('Problems', `<h1>Focus API problems</h1>\n<p>The kinds of error answer, by the last part of their <code>type</code>.</p>\n<ul>\n${items.join('\n')}\n</ul>`);
}

const HtmlPage = Named('HtmlPage', Type.String({ description: 'A short HTML page for people.', examples: ['<!doctype html>…'] }));
const html = (description: string) => ({ description, content: { 'text/html': { schema: HtmlPage } } });
const SLUGS = Object.keys(PROBLEMS) as ProblemSlug[];

export const problemsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    PROBLEM_PATH.slice(0, -1),
    {
      schema: {
        tags: ['operations'],
        operationId: 'listProblemTypes',
        summary: 'The kinds of problem, as a page',
        description: 'An HTML page linking the page of every problem `type` this API answers with. No token.',
        security: [],
        response: { 200: html('The list of problem pages.'), ...problemResponses(429) },
      },
    },
    (_request, reply) => {
      reply.headers(PAGE_SECURITY_HEADERS).type('text/html; charset=utf-8');
      return problemIndex();
    },
  );
  app.get(
    `${PROBLEM_PATH}:slug`,
    {
      schema: {
        tags: ['operations'],
        operationId: 'getProblemType',
        summary: 'What a problem type means, as a page',
        description: 'The page a problem’s `type` URI names: its title, when it happens and what to do. No token.',
        security: [],
        params: Type.Object({ slug: StringEnum(SLUGS, { description: 'The last part of a problem’s `type`.', examples: ['validation-failed'] }) }),
        response: { 200: html('The problem’s page.'), ...problemResponses(404, 429) },
      },
    },
    (request, reply) => {
      reply.headers(PAGE_SECURITY_HEADERS).type('text/html; charset=utf-8');
      return problemPage(request.params.slug);
    },
  );
};
