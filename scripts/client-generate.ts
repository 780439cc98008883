/*
 * Regenerates the typed client's types, clients/typescript/schema.d.ts, from the OpenAPI
 * document the server publishes, and gives the client package the server's version.
 * test/client/typed-client.test.ts fails when either is out of date, so run this after
 * changing a schema, a route or the version:
 *
 *   npm run client:generate
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import openapiTS, { COMMENT_HEADER, type OpenAPI3, astToString } from 'openapi-typescript';
import { PACKAGE_ROOT } from '../src/config/config.variables.js';
import { openapiDocument } from './openapi-document.js';

export const CLIENT_DIR = join(PACKAGE_ROOT, 'clients', 'typescript');
export const CLIENT_SCHEMA = join(CLIENT_DIR, 'schema.d.ts');

/**
 * The types openapi-typescript makes of the document with no options, as any integrator's
 * `npx openapi-typescript` run makes them: the document's request bodies list no read-only
 * field and no `default` (src/app/openapi.document.ts), so nothing needs configuring.
 */
export async function renderClientSchema(document: Record<string, unknown>): Promise<string> {
  const ast = await openapiTS(structuredClone(document) as unknown as OpenAPI3);
  return `${COMMENT_HEADER}// Regenerate with \`npm run client:generate\` (scripts/client-generate.ts).\n\n${astToString(ast)}`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  writeFileSync(CLIENT_SCHEMA, await renderClientSchema(await openapiDocument()));
  const manifest = join(CLIENT_DIR, 'package.json');
  const client = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
  client.version = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  writeFileSync(manifest, `${JSON.stringify(client, null, 2)}\n`);
  process.stdout.write(`${CLIENT_SCHEMA} rewritten from the OpenAPI document\n`);
}
