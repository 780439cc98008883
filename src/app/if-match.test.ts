import { expect, it } from 'vitest';
import { ifMatch } from '../toolkit/entity-tags.js';
import { type Client, type Response, describeEachDialect, useTestApp } from '../../test/helpers/harness.js';

/**
 * Contract section 7: PUT and DELETE of /sessions/{id} and /tasks/{id} with an If-Match
 * that names no current ETag → 412 problem+json and nothing changed; `*` matches any
 * existing record; without If-Match the write proceeds. (Races: test/attacks/concurrent-writes.test.ts.)
 */

const sessionBody = { org_id: 1, name: 'Guarded', type: 'standard', duration: 50, schedule: '2026-12-01', time: '9:00 AM', is_public: true };
const seriesBody = { ...sessionBody, name: 'Guarded series', schedule: '2026-01-05', is_recurring: 1, occurrence: 'daily' };

it('compares strongly: a weak tag never matches, `*` matches without rendering the record', async () => {
  const current = () => Promise.resolve('record');
  const tagOf = (r: string) => `"${r}"`;
  expect(ifMatch(undefined, tagOf)).toBeUndefined();
  await expect(ifMatch('"record"', tagOf)?.(current)).resolves.toBeUndefined();
  await expect(ifMatch('"stale", "record"', tagOf)?.(current)).resolves.toBeUndefined();
  await expect(ifMatch('W/"record"', tagOf)?.(current)).rejects.toMatchObject({ status: 412, slug: 'precondition-failed' });
  await expect(ifMatch('"stale"', tagOf)?.(current)).rejects.toMatchObject({ status: 412 });
  await expect(ifMatch('*', tagOf)?.(() => Promise.reject(new Error('rendered')))).resolves.toBeUndefined();
});

describeEachDialect('If-Match on PUT and DELETE', (dialect) => {
  const t = useTestApp(dialect, { alice: [1], bob: [1] });

  const withIfMatch = (client: Client, method: 'PUT' | 'DELETE', url: string, tag: string, body?: unknown) =>
    client.request(method, url, body, { 'if-match': tag });

  function expectPreconditionFailed(res: Response<{ type: string; status: number }>) {
    expect(res.status, res.text).toBe(412);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.type).toMatch(/\/precondition-failed$/);
    expect(res.body.status).toBe(412);
    expect(res.headers.etag).toBeUndefined();
  }

  /** The record and its tag, as GET answers them. */
  async function read(client: Client, url: string) {
    const res = await client.get(url);
    expect(res.status).toBe(200);
    return { tag: res.headers.etag as string, text: res.text };
  }

  for (const [kind, body] of [['a session', sessionBody], ['a series', seriesBody]] as const) {
    it(`changes ${kind} only while the If-Match tag is current, and answers the new tag`, async () => {
      const url = `/api/v1/sessions/${(await t.alice.post('/api/v1/sessions', body)).body.data.id}`;
      const first = await read(t.alice, url);

      const changed = await withIfMatch(t.alice, 'PUT', url, first.tag, { name: 'Changed' });
      expect(changed.status, changed.text).toBe(200);
      expect(changed.headers.etag).not.toBe(first.tag);
      expect((await read(t.alice, url)).tag).toBe(changed.headers.etag);

      // The first tag is stale now: refused, and nothing moves (not even updated_at).
      const before = await read(t.alice, url);
      expectPreconditionFailed(await withIfMatch(t.alice, 'PUT', url, first.tag, { name: 'Lost update' }));
      expectPreconditionFailed(await withIfMatch(t.alice, 'PUT', url, `W/${before.tag}`, { name: 'Weak' }));
      expect(await read(t.alice, url)).toEqual(before);

      // One current tag in a list is enough; `*` is any existing record; no header, no condition.
      expect((await withIfMatch(t.alice, 'PUT', url, `"stale", ${before.tag}`, { duration: 40 })).status).toBe(200);
      expect((await withIfMatch(t.alice, 'PUT', url, '*', { duration: 35 })).status).toBe(200);
      expect((await t.alice.put(url, { duration: 30 })).status).toBe(200);
    });
  }

  it('compares the whole representation: a join changes participants_count, so the host\'s tag', async () => {
    const url = `/api/v1/sessions/${(await t.alice.post('/api/v1/sessions', sessionBody)).body.data.id}`;
    const before = await read(t.alice, url);
    expect((await t.bob.post(`${url}/join`)).status).toBe(200);
    expectPreconditionFailed(await withIfMatch(t.alice, 'PUT', url, before.tag, { name: 'Stale view' }));
    expect((await withIfMatch(t.alice, 'PUT', url, (await read(t.alice, url)).tag, { name: 'Fresh view' })).status).toBe(200);
  });

  it('deletes a session only while the tag is current', async () => {
    const url = `/api/v1/sessions/${(await t.alice.post('/api/v1/sessions', seriesBody)).body.data.id}`;
    const first = await read(t.alice, url);
    expect((await t.alice.put(url, { name: 'Moved on' })).status).toBe(200);
    const current = await read(t.alice, url);
    expectPreconditionFailed(await withIfMatch(t.alice, 'DELETE', url, first.tag));
    expectPreconditionFailed(await withIfMatch(t.alice, 'DELETE', `${url}?scope=occurrence`, first.tag));
    expect(await read(t.alice, url)).toEqual(current);
    expect((await withIfMatch(t.alice, 'DELETE', url, current.tag)).status).toBe(204);
    expect((await t.alice.get(url)).status).toBe(404);
  });

  it('answers 404 and 403 as without If-Match: a precondition says nothing about a record you may not change', async () => {
    await expect(withIfMatch(t.alice, 'PUT', '/api/v1/sessions/999999', '*', { name: 'x' })).resolves.toMatchObject({ status: 404 });
    await expect(withIfMatch(t.alice, 'DELETE', '/api/v1/tasks/999999', '*')).resolves.toMatchObject({ status: 404 });
    const url = `/api/v1/sessions/${(await t.alice.post('/api/v1/sessions', sessionBody)).body.data.id}`;
    const { tag } = await read(t.bob, url);
    expect((await withIfMatch(t.bob, 'PUT', url, tag, { name: 'Not mine' })).status).toBe(403);
    expect((await withIfMatch(t.bob, 'DELETE', url, '"stale"')).status).toBe(403);
    // Bob's tag (his participation is in his body) is not Alice's: hers is refused with his.
    expectPreconditionFailed(await withIfMatch(t.alice, 'PUT', url, tag, { name: 'Bob\'s view' }));
  });

  it('checks the tag before a session body\'s rules; a task body that breaks a rule is 422 first', async () => {
    const sessionId = (await t.alice.post('/api/v1/sessions', sessionBody)).body.data.id as number;
    expectPreconditionFailed(await withIfMatch(t.alice, 'PUT', `/api/v1/sessions/${sessionId}`, '"stale"', { duration: 0 }));
    const task = (await t.alice.post('/api/v1/tasks', { context: 'ordered', session_id: sessionId })).body.data.id as string;
    expect((await withIfMatch(t.alice, 'PUT', `/api/v1/tasks/${task}`, '"stale"', { context: '' })).status).toBe(422);
    expect((await withIfMatch(t.alice, 'PUT', `/api/v1/tasks/${task}`, '"stale"', {})).status).toBe(422);
  });

  it('changes and deletes a task only while the tag is current', async () => {
    const sessionId = (await t.alice.post('/api/v1/sessions', sessionBody)).body.data.id as number;
    const url = `/api/v1/tasks/${(await t.alice.post('/api/v1/tasks', { context: 'guarded', session_id: sessionId })).body.data.id}`;
    const first = await read(t.alice, url);
    const changed = await withIfMatch(t.alice, 'PUT', url, first.tag, { is_completed: true });
    expect(changed.status).toBe(200);
    expect((await read(t.alice, url)).tag).toBe(changed.headers.etag);

    const current = await read(t.alice, url);
    expectPreconditionFailed(await withIfMatch(t.alice, 'PUT', url, first.tag, { context: 'lost' }));
    expectPreconditionFailed(await withIfMatch(t.alice, 'DELETE', url, first.tag));
    expect(await read(t.alice, url)).toEqual(current);

    expect((await withIfMatch(t.alice, 'PUT', url, '*', { context: 'any' })).status).toBe(200);
    expect((await withIfMatch(t.alice, 'DELETE', url, (await read(t.alice, url)).tag)).status).toBe(204);
    expect((await t.alice.get(url)).status).toBe(404);
  });

  it('documents If-Match and 412 on every PUT and DELETE of one record', async () => {
    const doc = (await t.anonymous.get('/api/v1/openapi.json')).body as { paths: Record<string, Record<string, any>> };
    for (const path of ['/api/v1/sessions/{id}', '/api/v1/tasks/{id}']) {
      for (const method of ['put', 'delete']) {
        const op = doc.paths[path]?.[method];
        expect(op.parameters.some((p: { in: string; name: string }) => p.in === 'header' && p.name === 'if-match'), `${method} ${path}`).toBe(true);
        expect(op.responses['412'], `${method} ${path}`).toBeDefined();
      }
    }
    expect(doc.paths['/api/v1/sessions/{id}']?.get.responses['412']).toBeUndefined();
  });
});
