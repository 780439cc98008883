import { expect, it } from 'vitest';
import { Client, describeEachDialect, useTestApp } from '../../../test/helpers/harness.js';
import { SCOPES, allows, routeScopeOf } from './accounts.scopes.js';

interface Doc {
  paths: Record<string, Record<string, { security?: unknown[] }>>;
}

/** Every authenticated operation of the OpenAPI document: method and path (`{id}` form). */
async function operations(client: Client): Promise<[string, string][]> {
  const doc = (await client.get<Doc>('/api/v1/openapi.json')).body;
  const out: [string, string][] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      if (!path.startsWith('/api/v1/') || (Array.isArray(op.security) && op.security.length === 0)) continue;
      out.push([method.toUpperCase(), path]);
    }
  }
  return out;
}

const fastifyPath = (path: string) => path.replace(/\{([^}]+)\}/g, ':$1');

describeEachDialect('scopes on every route (contract section 12)', (dialect) => {
  const t = useTestApp(dialect, { owner: [1] });

  it('every authenticated route declares its scope', async () => {
    const ops = await operations(t.owner);
    expect(ops.length).toBeGreaterThan(30);
    const undeclared = ops.filter(([method, path]) => routeScopeOf(method, fastifyPath(path)) === undefined);
    expect(undeclared).toEqual([]);
  });

  it('every route × every scope: outside its scope 403 insufficient-scope, inside it never', async () => {
    await t.admin.addUser('owner', [1], { admin: true });
    const tokens = new Map<string, Client>();
    for (const scope of SCOPES) {
      const made = await t.owner.post('/api/v1/me/tokens', { name: `only ${scope}`, scopes: [scope] });
      expect(made.status, made.text).toBe(201);
      tokens.set(scope, new Client(t.app, made.body.data.token));
    }
    const ops = await operations(t.owner);
    for (const [method, path] of ops) {
      const needed = routeScopeOf(method, fastifyPath(path)) ?? 'full';
      // An unknown query parameter ends an allowed request early (400/422) without side effects, and keeps an event stream from opening.
      const url = `${path.replace(/\{[^}]+\}/g, (m) => (m === '{handle}' ? 'nobody' : '999999'))}?zz_unknown=1`;
      for (const scope of SCOPES) {
        const res = await (tokens.get(scope) as Client).request(method, url, method === 'GET' || method === 'DELETE' ? undefined : {});
        const where = `${method} ${path} with ${scope}`;
        if (allows([scope], needed)) expect(res.body?.type ?? '', where).not.toMatch(/insufficient-scope$/);
        else {
          expect(res.status, where).toBe(403);
          expect(res.body.type, where).toMatch(/\/problems\/insufficient-scope$/);
        }
      }
    }
  });

  it('personal tokens: made with scopes and an expiry, shown once, listed without the secret, revocable', async () => {
    const made = await t.owner.post('/api/v1/me/tokens', { name: 'reader', scopes: ['sessions:read', 'me:read'], expires_at: '2099-01-01T00:00:00Z' });
    expect(made.status, made.text).toBe(201);
    expect(made.body.data).toMatchObject({ name: 'reader', kind: 'personal', scopes: ['sessions:read', 'me:read'], expires_at: '2099-01-01T00:00:00.000Z' });
    const reader = new Client(t.app, made.body.data.token);
    expect((await reader.get('/api/v1/sessions')).status).toBe(200);
    expect((await reader.get('/api/v1/tasks')).status).toBe(403);
    expect((await reader.get('/api/v1/me/tokens')).status).toBe(403);
    const listed = await t.owner.get('/api/v1/me/tokens');
    expect(listed.body.data.map((x: { name: string }) => x.name)).toContain('reader');
    expect(listed.text).not.toContain(made.body.data.token);
    expect((await t.owner.post('/api/v1/me/tokens', { name: 'x', scopes: ['root'] })).status).toBe(422);
    expect((await t.owner.post('/api/v1/me/tokens', { name: 'x', scopes: ['me:read'], expires_at: '2001-01-01T00:00:00Z' })).status).toBe(422);
    expect((await t.owner.delete(`/api/v1/me/tokens/${made.body.data.id}`)).status).toBe(204);
    expect((await reader.get('/api/v1/sessions')).status).toBe(401);
    expect((await t.owner.delete(`/api/v1/me/tokens/${made.body.data.id}`)).status).toBe(404);
  });
});
