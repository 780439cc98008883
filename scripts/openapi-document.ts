/*
 * The OpenAPI document exactly as the server publishes it at /api/v1/openapi.json, built
 * in-process on an in-memory database (no server, no data). Used by `npm run lint:openapi`
 * and `npm run client:generate`.
 */
import { buildApp } from '../src/app/app.js';
import { loadConfig } from '../src/config/config.js';

export async function openapiDocument(): Promise<Record<string, unknown>> {
  const app = await buildApp({ config: loadConfig({ DATABASE_URL: 'sqlite::memory:' }), logger: false });
  try {
    const res = await app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    if (res.statusCode !== 200) throw new Error(`GET /api/v1/openapi.json answered ${res.statusCode}: ${res.body}`);
    return res.json<Record<string, unknown>>();
  } finally {
    await app.close();
  }
}
