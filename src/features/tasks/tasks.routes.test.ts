import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect, errorPaths, useTestApp } from '../../../test/helpers/harness.js';
import { type One, type Page, type TaskRecord, expectTaskShape, listAllTasks, newSession, newTask } from './tasks.test-helpers.js';

describeEachDialect('tasks over HTTP', (dialect) => {
  const t = useTestApp(dialect, { alice: [1], bob: [1], carol: [2] });
  let session: number; // alice's private session in org 1
  let bobPrivate: number; // bob's private session in org 1: invisible to alice
  let bobPublic: number; // bob's public session in org 1: visible to alice
  let carolSession: number; // org 2

  beforeAll(async () => {
    session = await newSession(t.alice, 1);
    bobPrivate = await newSession(t.bob, 1);
    bobPublic = await newSession(t.bob, 1, { is_public: true });
    carolSession = await newSession(t.carol, 2, { is_public: true });
  });

  it('creates a task: 201, Location, the exact record, stored trimmed', async () => {
    const res = await t.alice.post<One>('/api/v1/tasks', { context: '  Write the report \n', session_id: session });
    expect(res.status, res.text).toBe(201);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const task = res.body.data;
    expectTaskShape(task);
    expect(task).toMatchObject({
      context: 'Write the report',
      is_completed: false,
      owner: 'alice',
      source: null,
      source_id: null,
      session_id: session,
    });
    expect(task.updated_at).toBe(task.created_at);
    expect(res.headers.location).toBe(`/api/v1/tasks/${task.id}`);

    const read = await t.alice.get(res.headers.location as string);
    expect(read.status).toBe(200);
    expect(read.body).toEqual({ data: task });
  });

  it('accepts a task with an origin, is_completed on create, and a public session of another member', async () => {
    const task = await newTask(t.alice, { context: 'x', session_id: bobPublic, source: 'todoist', source_id: 0, is_completed: true });
    expect(task).toMatchObject({ source: 'todoist', source_id: 0, session_id: bobPublic, is_completed: true, owner: 'alice' });
    const big = await newTask(t.alice, { context: 'y', session_id: session, source: 'linear', source_id: Number.MAX_SAFE_INTEGER });
    expect(big.source_id).toBe(Number.MAX_SAFE_INTEGER);
    // The same origin twice is a conflict, not a silent duplicate.
    const dup = await t.alice.post('/api/v1/tasks', { context: 'z', session_id: session, source: 'linear', source_id: Number.MAX_SAFE_INTEGER });
    expect(dup.status, dup.text).toBe(409);
  });

  it('context: 1–2000 characters after trimming', async () => {
    const exact = await newTask(t.alice, { context: `  ${'a'.repeat(2000)}  `, session_id: session });
    expect(exact.context).toBe('a'.repeat(2000));
    const one = await newTask(t.alice, { context: '\t7\n', session_id: session });
    expect(one.context).toBe('7');
    const emoji = await newTask(t.alice, { context: '🎯'.repeat(2000), session_id: session });
    expect([...emoji.context]).toHaveLength(2000);

    for (const context of ['', '   ', '\n\t \u00a0', 'a'.repeat(2001), ` ${'a'.repeat(1000)} ${'b'.repeat(1000)} `, 42, null, ['a']]) {
      const res = await t.alice.post('/api/v1/tasks', { context, session_id: session });
      expect(errorPaths(res), JSON.stringify(context)).toEqual(['/context']);
    }
    expect(errorPaths(await t.alice.post('/api/v1/tasks', { session_id: session }))).toEqual(['/context']);
  });

  it('session_id: required, visible to the user, in their org (422 at /session_id)', async () => {
    expect(errorPaths(await t.alice.post('/api/v1/tasks', { context: 'x' }))).toEqual(['/session_id']);
    for (const sessionId of [bobPrivate, carolSession, 999_999, 0, -1, 1.5, '1', null]) {
      const res = await t.alice.post('/api/v1/tasks', { context: 'x', session_id: sessionId });
      expect(errorPaths(res), String(sessionId)).toEqual(['/session_id']);
    }
  });

  it('source and source_id: both or neither, and well-formed', async () => {
    const direct = await newTask(t.alice, { context: 'x', session_id: session, source: null, source_id: null });
    expect(direct).toMatchObject({ source: null, source_id: null });
    expect(errorPaths(await t.alice.post('/api/v1/tasks', { context: 'x', session_id: session, source: 'todoist' }))).toEqual(['/source_id']);
    expect(errorPaths(await t.alice.post('/api/v1/tasks', { context: 'x', session_id: session, source_id: 5 }))).toEqual(['/source']);
    expect(
      errorPaths(await t.alice.post('/api/v1/tasks', { context: 'x', session_id: session, source: 'todoist', source_id: null })),
    ).toEqual(['/source_id']);
    for (const sourceId of [-1, 1.5, Number.MAX_SAFE_INTEGER + 1, 1e300, '', 'x'.repeat(256), 'a\u0001b', true, {}, [5]]) {
      const res = await t.alice.post('/api/v1/tasks', { context: 'x', session_id: session, source: 's', source_id: sourceId });
      expect(errorPaths(res), JSON.stringify(sourceId)).toEqual(['/source_id']);
    }
    for (const source of ['', 'x'.repeat(65), 7]) {
      const res = await t.alice.post('/api/v1/tasks', { context: 'x', session_id: session, source, source_id: 1 });
      expect(errorPaths(res), String(source)).toEqual(['/source']);
    }
  });

  it('lists every broken field at once, and unknown fields are 422', async () => {
    const res = await t.alice.post('/api/v1/tasks', { context: '', session_id: 'one', source_id: -3, colour: 'red', owner: 'mallory' });
    expect(errorPaths(res)).toEqual(['/colour', '/context', '/session_id', '/source_id']);
    expect(errorPaths(await t.alice.put('/api/v1/tasks/1', { context: 'x', priority: 1 }))).toEqual(['/priority']);
    // Rules the schema cannot state are listed with its own: a session nobody can see, an origin half given.
    const before = (await t.alice.get('/api/v1/tasks')).body.data;
    expect(errorPaths(await t.alice.post('/api/v1/tasks', { context: '', session_id: 999_999 }))).toEqual(['/context', '/session_id']);
    expect(errorPaths(await t.alice.post('/api/v1/tasks', { context: 'x', session_id: 999_999, source: 'linear' }))).toEqual(['/session_id', '/source_id']);
    const bulk = await t.alice.post('/api/v1/tasks/bulk', { session_id: 999_999, tasks: [{ context: '', source: 'x', source_id: 1 }, { context: 'y', source: 'x' }] });
    expect(errorPaths(bulk).sort()).toEqual(['/session_id', '/tasks/0/context', '/tasks/1/source_id']);
    expect((await t.alice.get('/api/v1/tasks')).body.data).toEqual(before);
  });

  it('ignores read-only fields, so a record read back can be sent again', async () => {
    const created = await newTask(t.alice, {
      context: 'original',
      session_id: session,
      id: '999999',
      owner: 'mallory',
      created_at: '2000-01-01T00:00:00.000Z',
      updated_at: '2000-01-01T00:00:00.000Z',
    });
    expect(created.id).not.toBe('999999');
    expect(created.owner).toBe('alice');
    expect(created.created_at).not.toBe('2000-01-01T00:00:00.000Z');

    const roundTrip = await t.alice.put<One>(`/api/v1/tasks/${created.id}`, { ...created, context: 'changed', owner: 'bob', id: '1' });
    expect(roundTrip.status, roundTrip.text).toBe(200);
    expect(roundTrip.body.data).toMatchObject({ id: created.id, owner: 'alice', context: 'changed', created_at: created.created_at });
    const again = await t.alice.put(`/api/v1/tasks/${created.id}`, roundTrip.body.data);
    expect(again.status, again.text).toBe(200);

    // Every record's read-only fields, in every body: created_by is a session's, rrule too.
    const foreign = { created_by: 'bob', starts_at: 'x', participation: {}, rrule: null };
    const task = await newTask(t.alice, { context: 'any body', session_id: session, ...foreign });
    expect(task.owner).toBe('alice');
    expect((await t.alice.put(`/api/v1/tasks/${task.id}`, { is_completed: true, ...foreign })).status).toBe(200);
    const bulk = await t.alice.post('/api/v1/tasks/bulk', {
      session_id: session,
      id: 7,
      tasks: [{ context: 'imported', source: 'todoist', source_id: 4242, id: '1', owner: 'bob', created_at: 'x', is_completed: undefined }],
    });
    expect(bulk.status, bulk.text).toBe(200);
    expect(bulk.body.data[0]).toMatchObject({ context: 'imported', owner: 'alice' });
  });

  it('DELETE takes an empty body whatever its Content-Type', async () => {
    for (const type of ['application/json', 'text/plain']) {
      const task = await newTask(t.alice, { context: 'to go', session_id: session });
      const res = await t.alice.request('DELETE', `/api/v1/tasks/${task.id}`, '', { 'content-type': type });
      expect(res.status, `${type}: ${res.text}`).toBe(204);
      const s = await newSession(t.alice, 1);
      expect((await t.alice.request('DELETE', `/api/v1/sessions/${s}`, '', { 'content-type': type })).status).toBe(204);
    }
  });

  it('PUT changes context and completion, needs one of them, keeps the rest', async () => {
    const task = await newTask(t.alice, { context: 'draft', session_id: session });
    await new Promise((r) => setTimeout(r, 5));
    const done = await t.alice.put<One>(`/api/v1/tasks/${task.id}`, { is_completed: true });
    expect(done.status, done.text).toBe(200);
    expectTaskShape(done.body.data);
    expect(done.body.data).toMatchObject({ id: task.id, context: 'draft', is_completed: true, session_id: session });
    expect(done.body.data.updated_at > task.updated_at).toBe(true);
    expect(done.body.data.created_at).toBe(task.created_at);

    const text = await t.alice.put<One>(`/api/v1/tasks/${task.id}`, { context: '  final  ' });
    expect(text.body.data).toMatchObject({ context: 'final', is_completed: true });
    const undo = await t.alice.put<One>(`/api/v1/tasks/${task.id}`, { is_completed: false, context: 'again' });
    expect(undo.body.data).toMatchObject({ context: 'again', is_completed: false });
    expect((await t.alice.get<One>(`/api/v1/tasks/${task.id}`)).body.data).toEqual(undo.body.data);

    expect(errorPaths(await t.alice.put(`/api/v1/tasks/${task.id}`, {}))).toEqual(['/']);
    expect(errorPaths(await t.alice.put(`/api/v1/tasks/${task.id}`, { id: task.id, owner: 'alice' }))).toEqual(['/']);
    expect(errorPaths(await t.alice.put(`/api/v1/tasks/${task.id}`, { context: '   ' }))).toEqual(['/context']);
    expect(errorPaths(await t.alice.put(`/api/v1/tasks/${task.id}`, { is_completed: 'yes' }))).toEqual(['/is_completed']);
    expect(errorPaths(await t.alice.put(`/api/v1/tasks/${task.id}`, { context: 'a'.repeat(2001) }))).toEqual(['/context']);
    // A PUT of an absent task is 404, not an upsert.
    expect((await t.alice.put('/api/v1/tasks/987654', { context: 'x' })).status).toBe(404);
  });

  it('DELETE answers 204 with no body, then the task is gone', async () => {
    const task = await newTask(t.alice, { context: 'temporary', session_id: session });
    const del = await t.alice.delete(`/api/v1/tasks/${task.id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await t.alice.get(`/api/v1/tasks/${task.id}`)).status).toBe(404);
    expect((await t.alice.put(`/api/v1/tasks/${task.id}`, { context: 'x' })).status).toBe(404);
    expect((await t.alice.delete(`/api/v1/tasks/${task.id}`)).status).toBe(404);
    const ids = (await listAllTasks(t.alice, '', 500)).map((x) => x.id);
    expect(ids).not.toContain(task.id);
  });

  it('path ids that are not positive integers are 404 problems, never 500', async () => {
    // Spellings JavaScript would read as the number of an existing task still name nothing.
    const task = await newTask(t.alice, { context: 'spelled oddly', session_id: session });
    expect((await t.alice.get(`/api/v1/tasks/${task.id}`)).status).toBe(200);
    for (const id of [`0x${Number(task.id).toString(16)}`, `${task.id}.0`, `+${task.id}`, `${task.id}e0`, `%20${task.id}`]) {
      expect((await t.alice.get(`/api/v1/tasks/${id}`)).status, id).toBe(404);
    }
    for (const id of ['abc', '0', '-1', '1.5', '1e3', '0x10', '%20', '99999999999999999999', '9'.repeat(400), '00']) {
      for (const res of [
        await t.alice.get(`/api/v1/tasks/${id}`),
        await t.alice.put(`/api/v1/tasks/${id}`, { context: 'x' }),
        await t.alice.delete(`/api/v1/tasks/${id}`),
      ]) {
        expect(res.status, `${id}: ${res.text}`).toBe(404);
        expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      }
    }
  });
});

describeEachDialect('GET /tasks: filters, paging, deleted sessions', (dialect) => {
  const t = useTestApp(dialect, { dana: [5], eve: [5] });
  let s1: number;
  let s2: number;
  const made: TaskRecord[] = [];

  beforeAll(async () => {
    s1 = await newSession(t.dana, 5);
    s2 = await newSession(t.dana, 5);
    for (let i = 0; i < 23; i++) {
      made.push(await newTask(t.dana, { context: `task ${i}`, session_id: i % 3 === 0 ? s2 : s1, is_completed: i % 4 === 0 }));
    }
    const eveSession = await newSession(t.eve, 5);
    await newTask(t.eve, { context: 'not dana’s', session_id: eveSession });
  });

  it('lists only the user’s tasks, oldest first, as a list envelope', async () => {
    const res = await t.dana.get<Page>('/api/v1/tasks');
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['data', 'next_cursor']);
    expect(res.body.next_cursor).toBeNull();
    expect(res.body.data).toEqual(made);
    for (const task of res.body.data) expectTaskShape(task);
  });

  it('walks every page with no duplicate and nothing missing, for every page size', async () => {
    for (const limit of [1, 2, 5, 7, 22, 23, 24, 500]) {
      const all = await listAllTasks(t.dana, '', limit);
      expect(all.map((x) => x.id), `limit ${limit}`).toEqual(made.map((x) => x.id));
    }
    const first = await t.dana.get<Page>('/api/v1/tasks?limit=23');
    expect(first.body.data).toHaveLength(23);
    expect(first.body.next_cursor).toBeNull();
  });

  it('filters by session_id and is_completed, alone, together and across pages', async () => {
    const expectFilter = async (query: string, keep: (x: TaskRecord) => boolean) => {
      const want = made.filter(keep).map((x) => x.id);
      expect(want.length).toBeGreaterThan(0);
      expect((await listAllTasks(t.dana, query, 100)).map((x) => x.id), query).toEqual(want);
      expect((await listAllTasks(t.dana, query, 2)).map((x) => x.id), query).toEqual(want);
    };
    await expectFilter(`session_id=${s1}`, (x) => x.session_id === s1);
    await expectFilter(`session_id=${s2}`, (x) => x.session_id === s2);
    await expectFilter('is_completed=true', (x) => x.is_completed);
    await expectFilter('is_completed=false', (x) => !x.is_completed);
    await expectFilter(`session_id=${s2}&is_completed=false`, (x) => x.session_id === s2 && !x.is_completed);
    expect((await t.dana.get('/api/v1/tasks?session_id=999999')).body).toEqual({ data: [], next_cursor: null });
  });

  it('rejects every bad filter or paging value with 422 naming it', async () => {
    const cases: [string, string[]][] = [
      ['is_completed=maybe', ['/is_completed']],
      ['is_completed=', ['/is_completed']],
      ['session_id=abc', ['/session_id']],
      ['session_id=0', ['/session_id']],
      ['session_id=1.5', ['/session_id']],
      ['session_id=0x10', ['/session_id']],
      ['limit=0', ['/limit']],
      ['limit=1001', ['/limit']],
      ['limit=-1', ['/limit']],
      ['limit=1e2', ['/limit']],
      ['limit=ten', ['/limit']],
      ['limit=1&limit=2', ['/limit']],
      ['cursor=', ['/cursor']],
      ['cursor=not-a-cursor', ['/cursor']],
      [`cursor=${Buffer.from('["x"]').toString('base64url')}`, ['/cursor']],
      [`cursor=${Buffer.from('[1.5]').toString('base64url')}`, ['/cursor']],
      [`cursor=${Buffer.from('[-5]').toString('base64url')}`, ['/cursor']],
      ['colour=red', ['/colour']],
      ['limit=0&is_completed=2&owner=x', ['/is_completed', '/limit', '/owner']],
    ];
    for (const [query, paths] of cases) {
      expect(errorPaths(await t.dana.get(`/api/v1/tasks?${query}`)), query).toEqual(paths);
    }
    expect((await t.dana.get('/api/v1/tasks?limit=1000')).status).toBe(200);
    expect((await t.dana.get<Page>('/api/v1/tasks?limit=1')).body.data).toHaveLength(1);
  });

  it('keeps tasks of a deleted session with session_id null', async () => {
    const doomed = await newSession(t.dana, 5);
    const kept = await newTask(t.dana, { context: 'outlives its session', session_id: doomed });
    const other = await newTask(t.eve, { context: 'eve’s', session_id: await newSession(t.eve, 5, { is_public: true }) });
    const del = await t.dana.delete(`/api/v1/sessions/${doomed}`);
    expect(del.status, del.text).toBe(204);
    const after = await t.dana.get<One>(`/api/v1/tasks/${kept.id}`);
    expect(after.status).toBe(200);
    expect(after.body.data).toMatchObject({ id: kept.id, context: 'outlives its session', session_id: null });
    expect((await listAllTasks(t.dana, '', 500)).find((x) => x.id === kept.id)?.session_id).toBeNull();
    expect((await t.dana.get<Page>(`/api/v1/tasks?session_id=${doomed}`)).body.data).toEqual([]);
    // A session that no longer exists cannot take new tasks.
    expect(errorPaths(await t.dana.post('/api/v1/tasks', { context: 'x', session_id: doomed }))).toEqual(['/session_id']);
    // Still editable after its session went.
    expect((await t.dana.put<One>(`/api/v1/tasks/${kept.id}`, { is_completed: true })).body.data.session_id).toBeNull();
    expect((await t.eve.get<One>(`/api/v1/tasks/${other.id}`)).body.data.session_id).toBe(other.session_id);
  });
});
