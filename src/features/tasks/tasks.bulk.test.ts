import { beforeAll, expect, it } from 'vitest';
import { type Client, describeEachDialect, errorPaths, useTestApp } from '../../../test/helpers/harness.js';
import { type BulkResponse, type One, expectTaskShape, listAllTasks, newSession } from './tasks.test-helpers.js';

describeEachDialect('POST /tasks/bulk', (dialect) => {
  const t = useTestApp(dialect, { alice: [1], bob: [1], carol: [2] });
  let session: number;
  let bobPrivate: number;
  let carolSession: number;

  const bulk = (client: Client, tasks: unknown[], sessionId: number = session) =>
    client.post<BulkResponse>('/api/v1/tasks/bulk', { session_id: sessionId, tasks });

  const all = (client: Client) => listAllTasks(client, '', 500);

  beforeAll(async () => {
    session = await newSession(t.alice, 1);
    bobPrivate = await newSession(t.bob, 1);
    carolSession = await newSession(t.carol, 2, { is_public: true });
  });

  it('creates, then updates in place on (source, source_id) without duplicates', async () => {
    const first = await bulk(t.alice, [
      { context: ' Buy milk ', source: 'todoist', source_id: 1 },
      { context: 'Call Bob', source: 'todoist', source_id: 2 },
    ]);
    expect(first.status, first.text).toBe(200);
    expect(first.body.meta).toEqual({ created: 2, updated: 0, unchanged: 0 });
    expect(first.body.data).toHaveLength(2);
    for (const task of first.body.data) expectTaskShape(task);
    expect(first.body.data[0]).toMatchObject({ context: 'Buy milk', source: 'todoist', source_id: 1, owner: 'alice', session_id: session, is_completed: false });
    expect(first.body.data[1]).toMatchObject({ context: 'Call Bob', source_id: 2 });

    // Completion made in the app survives a re-import that only changes the text.
    const [milk] = first.body.data;
    expect((await t.alice.put(`/api/v1/tasks/${milk!.id}`, { is_completed: true })).status).toBe(200);

    const second = await bulk(t.alice, [
      { context: 'Buy oat milk', source: 'todoist', source_id: 1 },
      { context: 'Email Dana', source: 'todoist', source_id: 3 },
    ]);
    expect(second.status, second.text).toBe(200);
    expect(second.body.meta).toEqual({ created: 1, updated: 1, unchanged: 0 });
    expect(second.body.data[0]).toMatchObject({ id: milk!.id, context: 'Buy oat milk', is_completed: true, created_at: milk!.created_at });
    expect(second.body.data[0]!.updated_at >= milk!.updated_at).toBe(true);

    const stored = (await all(t.alice)).filter((x) => x.source === 'todoist');
    expect(stored.map((x) => [x.source_id, x.context])).toEqual([
      [1, 'Buy oat milk'],
      [2, 'Call Bob'],
      [3, 'Email Dana'],
    ]);
  });

  it('adopts a task created directly with the same origin instead of duplicating it', async () => {
    const direct = await t.alice.post<One>('/api/v1/tasks', { context: 'typed in', session_id: session, source: 'jira', source_id: 77 });
    expect(direct.status).toBe(201);
    const res = await bulk(t.alice, [{ context: 'imported', source: 'jira', source_id: 77 }]);
    expect(res.body.meta).toEqual({ created: 0, updated: 1, unchanged: 0 });
    expect(res.body.data[0]).toMatchObject({ id: direct.body.data.id, context: 'imported' });
  });

  it('within one request the last duplicate wins; duplicates show the same final task in request order', async () => {
    const res = await bulk(t.alice, [
      { context: 'first', source: 'linear', source_id: 10 },
      { context: 'other', source: 'linear', source_id: 11 },
      { context: 'second', source: 'linear', source_id: 10 },
      { context: 'same id, other source', source: 'asana', source_id: 10 },
      { context: 'third', source: 'linear', source_id: 10 },
    ]);
    expect(res.status, res.text).toBe(200);
    expect(res.body.meta).toEqual({ created: 3, updated: 0, unchanged: 0 });
    const [a, b, c, d, e] = res.body.data;
    expect(a).toEqual(c);
    expect(a).toEqual(e);
    expect(a).toMatchObject({ context: 'third', source: 'linear', source_id: 10 });
    expect(b).toMatchObject({ context: 'other', source_id: 11 });
    expect(d).toMatchObject({ context: 'same id, other source', source: 'asana', source_id: 10 });
    expect(new Set([a!.id, b!.id, d!.id]).size).toBe(3);

    const again = await bulk(t.alice, [
      { context: 'x', source: 'linear', source_id: 10 },
      { context: 'y', source: 'linear', source_id: 10 },
    ]);
    expect(again.body.meta).toEqual({ created: 0, updated: 1, unchanged: 0 });
    expect(again.body.data.map((x) => [x.id, x.context])).toEqual([
      [a!.id, 'y'],
      [a!.id, 'y'],
    ]);
    expect((await all(t.alice)).filter((x) => x.source === 'linear' && x.source_id === 10)).toHaveLength(1);
  });

  it('another user’s identical origin is a different task', async () => {
    const bobSession = await newSession(t.bob, 1);
    const mine = await bulk(t.alice, [{ context: 'alice’s', source: 'github', source_id: 5 }]);
    const theirs = await bulk(t.bob, [{ context: 'bob’s', source: 'github', source_id: 5 }], bobSession);
    expect(theirs.status, theirs.text).toBe(200);
    expect(theirs.body.meta).toEqual({ created: 1, updated: 0, unchanged: 0 });
    expect(theirs.body.data[0]).toMatchObject({ owner: 'bob', context: 'bob’s' });
    expect(theirs.body.data[0]!.id).not.toBe(mine.body.data[0]!.id);
    expect((await t.alice.get<One>(`/api/v1/tasks/${mine.body.data[0]!.id}`)).body.data.context).toBe('alice’s');
  });

  it('is all or nothing: bad items change nothing and every one is listed', async () => {
    const before = await all(t.alice);
    const res = await bulk(t.alice, [
      { context: 'fine', source: 'todoist', source_id: 1 },
      { context: '', source: 'todoist', source_id: 500 },
      { context: 'fine too', source: 'todoist', source_id: 501 },
      { context: '   ', source: 'todoist', source_id: -1 },
      { context: 'no origin' },
      { context: 'x', source: '', source_id: 1.5, extra: true },
      { context: 'a'.repeat(2001), source: 'todoist', source_id: Number.MAX_SAFE_INTEGER + 1 },
      'not an object',
      { context: 'direct', source: null, source_id: null },
    ]);
    expect(errorPaths(res)).toEqual(
      [
        '/tasks/1/context',
        '/tasks/3/context',
        '/tasks/3/source_id',
        '/tasks/4/source',
        '/tasks/4/source_id',
        '/tasks/5/extra',
        '/tasks/5/source',
        '/tasks/5/source_id',
        '/tasks/6/context',
        '/tasks/6/source_id',
        '/tasks/7',
        '/tasks/8/source',
        '/tasks/8/source_id',
      ].sort(),
    );
    expect((res.body as unknown as { title: string }).title).toBe('Validation failed');
    expect(await all(t.alice)).toEqual(before);
  });

  it('takes 1–1000 items', async () => {
    expect(errorPaths(await bulk(t.alice, []))).toEqual(['/tasks']);
    const tooMany = Array.from({ length: 1001 }, (_, i) => ({ context: `t${i}`, source: 'limit', source_id: i }));
    expect(errorPaths(await bulk(t.alice, tooMany))).toEqual(['/tasks']);
    expect((await all(t.alice)).filter((x) => x.source === 'limit')).toHaveLength(0);

    const max = await bulk(t.alice, tooMany.slice(0, 1000));
    expect(max.status, max.text).toBe(200);
    expect(max.body.meta).toEqual({ created: 1000, updated: 0, unchanged: 0 });
    expect(max.body.data.map((x) => x.source_id)).toEqual(tooMany.slice(0, 1000).map((x) => x.source_id));
    const reimport = await bulk(t.alice, tooMany.slice(0, 1000).map((x) => ({ ...x, context: `${x.context}!` })));
    expect(reimport.body.meta).toEqual({ created: 0, updated: 1000, unchanged: 0 });
    expect(reimport.body.data.map((x) => x.id)).toEqual(max.body.data.map((x) => x.id));
  });

  it('validates the envelope: session_id visible, tasks an array, no unknown fields', async () => {
    const item = { context: 'x', source: 's', source_id: 1 };
    expect(errorPaths(await t.alice.post('/api/v1/tasks/bulk', { tasks: [item] }))).toEqual(['/session_id']);
    expect(errorPaths(await t.alice.post('/api/v1/tasks/bulk', { session_id: session }))).toEqual(['/tasks']);
    expect(errorPaths(await t.alice.post('/api/v1/tasks/bulk', { session_id: session, tasks: item }))).toEqual(['/tasks']);
    expect(errorPaths(await t.alice.post('/api/v1/tasks/bulk', { session_id: session, tasks: [item], mode: 'merge' }))).toEqual(['/mode']);
    expect(errorPaths(await t.alice.post('/api/v1/tasks/bulk', [item]))).toEqual(['/']);
    for (const sessionId of [bobPrivate, carolSession, 424242]) {
      expect(errorPaths(await bulk(t.alice, [{ context: 'nope', source: 'vis', source_id: 1 }], sessionId))).toEqual(['/session_id']);
    }
    expect((await all(t.alice)).filter((x) => x.source === 'vis')).toHaveLength(0);
  });

  it('8 concurrent overlapping imports end with exactly one task per key and no 5xx', async () => {
    const keys = Array.from({ length: 40 }, (_, i) => i);
    const requests = Array.from({ length: 8 }, (_, r) => {
      // Each import covers an overlapping window of keys, in its own order.
      const mine = keys.filter((k) => (k + r) % 3 !== 0);
      if (r % 2 === 1) mine.reverse();
      return bulk(t.alice, mine.map((k) => ({ context: `run ${r} key ${k}`, source: 'race', source_id: k })));
    });
    const results = await Promise.all(requests);
    for (const res of results) expect(res.status, res.text).toBe(200);

    const stored = (await all(t.alice)).filter((x) => x.source === 'race');
    expect(stored.map((x) => x.source_id).sort((a, b) => a! - b!)).toEqual(keys);
    expect(results.reduce((n, r) => n + r.body.meta.created, 0)).toBe(keys.length);
    // Every response names the one stored task for each key.
    const idByKey = new Map(stored.map((x) => [x.source_id, x.id]));
    for (const res of results) for (const task of res.body.data) expect(task.id).toBe(idByKey.get(task.source_id));
  });
});
