import { beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../app/app.js';
import { createAuthService } from '../auth/auth.service.js';
import { openStorage } from '../../storage/database.js';
import { Client, describeEachDialect, errorPaths, testConfig, useTestApp, useTestDatabase } from '../../../test/helpers/harness.js';
import { type BulkResponse, type One, type Page, listAllTasks, newSession, newTask } from './tasks.test-helpers.js';

/*
 * Contract section 6: `source_id` is a non-negative safe integer or a string of 1–255
 * characters without control characters, returned in the JSON type it was last sent with;
 * its text is the de-duplication key, so `42` and `"42"` are one external task. And
 * GET /tasks without `limit` answers up to 1,000 tasks.
 */

describeEachDialect('string source_id', (dialect) => {
  const t = useTestApp(dialect, { alice: [1], bob: [1] });
  let session: number;

  beforeAll(async () => {
    session = await newSession(t.alice, 1);
  });

  const bulk = (tasks: Record<string, unknown>[], client = t.alice) => client.post<BulkResponse>('/api/v1/tasks/bulk', { session_id: session, tasks });

  it('imports the string ids of Linear, Todoist, Jira and GitHub and returns each as sent', async () => {
    const ids = ['ENG-4711', '6Jf8VQXxpwv56VQ7', 'PROJ-1', 'I_kwDOAbc123', '0f8fad5b-d9cb-469f-a165-70867728950e', '007', ' padded ', '😀'.repeat(255)];
    const res = await bulk(ids.map((id, i) => ({ context: `imported ${i}`, source: 'mixed', source_id: id })));
    expect(res.status, res.text).toBe(200);
    expect(res.body.meta).toEqual({ created: ids.length, updated: 0, unchanged: 0 });
    expect(res.body.data.map((task) => task.source_id)).toEqual(ids);
    for (const task of res.body.data) {
      const one = await t.alice.get<One>(`/api/v1/tasks/${task.id}`);
      expect(one.body.data.source_id).toBe(task.source_id);
    }
    const direct = await newTask(t.alice, { context: 'direct', session_id: session, source: 'github', source_id: 'I_kwDOdirect' });
    expect(direct.source_id).toBe('I_kwDOdirect');
    const numeric = await newTask(t.alice, { context: 'numeric', session_id: session, source: 'github', source_id: 0 });
    expect(numeric.source_id).toBe(0);
  });

  it('treats 42 and "42" as one task within a request: the last wins, in its JSON type', async () => {
    const res = await bulk([
      { context: 'as a number', source: 'todoist', source_id: 42 },
      { context: 'other', source: 'todoist', source_id: 43 },
      { context: 'as text', source: 'todoist', source_id: '42' },
    ]);
    expect(res.status, res.text).toBe(200);
    expect(res.body.meta).toEqual({ created: 2, updated: 0, unchanged: 0 });
    const [first, other, last] = res.body.data;
    expect(first).toEqual(last);
    expect(last).toMatchObject({ context: 'as text', source_id: '42' });
    expect(other).toMatchObject({ source_id: 43 });
  });

  it('treats 42 and "42" as one task across requests, and answers in the type last sent', async () => {
    const first = await bulk([{ context: 'v1', source: 'linear', source_id: 4711 }]);
    expect(first.body.meta).toEqual({ created: 1, updated: 0, unchanged: 0 });
    const second = await bulk([{ context: 'v2', source: 'linear', source_id: '4711' }]);
    expect(second.body.meta).toEqual({ created: 0, updated: 1, unchanged: 0 });
    expect(second.body.data[0]).toMatchObject({ id: first.body.data[0]?.id, context: 'v2', source_id: '4711' });
    const third = await bulk([{ context: 'v3', source: 'linear', source_id: 4711 }]);
    expect(third.body.meta).toEqual({ created: 0, updated: 1, unchanged: 0 });
    expect(third.body.data[0]).toMatchObject({ id: first.body.data[0]?.id, context: 'v3', source_id: 4711 });
    const mine = (await listAllTasks(t.alice, '', 1000)).filter((task) => task.source === 'linear');
    expect(mine).toHaveLength(1);
    expect(mine[0]?.source_id).toBe(4711);
  });

  it('refuses a direct task whose origin, by its text, already exists', async () => {
    await newTask(t.alice, { context: 'direct', session_id: session, source: 'jira', source_id: 'PROJ-9' });
    await newTask(t.alice, { context: 'direct', session_id: session, source: 'jira', source_id: 10 });
    expect((await t.alice.post('/api/v1/tasks', { context: 'again', session_id: session, source: 'jira', source_id: 'PROJ-9' })).status).toBe(409);
    expect((await t.alice.post('/api/v1/tasks', { context: 'again', session_id: session, source: 'jira', source_id: '10' })).status).toBe(409);
    // Another origin, or another user, is another task.
    expect((await t.alice.post('/api/v1/tasks', { context: 'other origin', session_id: session, source: 'github', source_id: 'PROJ-9' })).status).toBe(201);
    const bobs = await newSession(t.bob, 1);
    expect((await t.bob.post('/api/v1/tasks', { context: 'bob’s', session_id: bobs, source: 'jira', source_id: 'PROJ-9' })).status).toBe(201);
  });

  it('refuses empty, long and control-character ids with 422 at the item, changing nothing', async () => {
    const before = await listAllTasks(t.alice, '', 1000);
    const bad = ['', 'x'.repeat(256), 'tab\there', 'line\nbreak', '\u001f', 'del\u007f', 'c1\u0085', '\u009f', -1, 1.5, Number.MAX_SAFE_INTEGER + 1, true, null, { id: 1 }];
    const res = await bulk([
      { context: 'fine', source: 'ok', source_id: 'fine-1' },
      ...bad.map((id) => ({ context: 'bad', source: 'ok', source_id: id })),
    ]);
    expect(errorPaths(res)).toEqual(bad.map((_, i) => `/tasks/${i + 1}/source_id`).sort());
    expect(await listAllTasks(t.alice, '', 1000)).toEqual(before);
    const direct = await t.alice.post<{ errors: { path: string; message: string }[] }>('/api/v1/tasks', { context: 'x', session_id: session, source: 'ok', source_id: 'a\u0007b' });
    expect(direct.body.errors).toEqual([{ path: '/source_id', message: 'must not contain control characters' }]);
    const wrongType = await t.alice.post<{ errors: { path: string; message: string }[] }>('/api/v1/tasks', { context: 'x', session_id: session, source: 'ok', source_id: false });
    expect(wrongType.body.errors).toEqual([{ path: '/source_id', message: 'must be integer, string or null' }]);
  });

  it('accepts the largest safe integer and 255 characters exactly', async () => {
    const res = await bulk([
      { context: 'max', source: 'edge', source_id: Number.MAX_SAFE_INTEGER },
      { context: 'long', source: 'edge', source_id: 'x'.repeat(255) },
    ]);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.map((task) => task.source_id)).toEqual([Number.MAX_SAFE_INTEGER, 'x'.repeat(255)]);
  });
});

describeEachDialect('GET /tasks page size', (dialect) => {
  const t = useTestApp(dialect, { hoarder: [1] });

  it('answers up to 1,000 tasks without limit, with next_cursor when there are more', async () => {
    const session = await newSession(t.hoarder, 1);
    const items = Array.from({ length: 1000 }, (_, i) => ({ context: `task ${i}`, source: 'hoard', source_id: i }));
    expect((await t.hoarder.post('/api/v1/tasks/bulk', { session_id: session, tasks: items })).status).toBe(200);
    const exactly = await t.hoarder.get<Page>('/api/v1/tasks');
    expect(exactly.body.data).toHaveLength(1000);
    expect(exactly.body.next_cursor).toBeNull();

    await newTask(t.hoarder, { context: 'the 1001st', session_id: session });
    const first = await t.hoarder.get<Page>('/api/v1/tasks');
    expect(first.body.data).toHaveLength(1000);
    expect(first.body.next_cursor).not.toBeNull();
    const rest = await t.hoarder.get<Page>(`/api/v1/tasks?cursor=${encodeURIComponent(first.body.next_cursor ?? '')}`);
    expect(rest.body.data.map((task) => task.context)).toEqual(['the 1001st']);
    expect(rest.body.next_cursor).toBeNull();
    expect(errorPaths(await t.hoarder.get('/api/v1/tasks?limit=1001'))).toEqual(['/limit']);
  });
});

describeEachDialect('migration 0007: tasks stored with integer source_ids before it', (dialect) => {
  const database = useTestDatabase(dialect);

  it('keeps every integer id, answers it as a number, and matches "42" to it afterwards', async () => {
    const now = '2026-01-01T00:00:00.000Z';
    const storage = openStorage({ databaseUrl: database.url });
    try {
      await storage.migrate('0005_idempotency_keys');
      // The schema as it was: only the columns every later migration keeps.
      const old = storage.db as any;
      const user = await old.insertInto('users').values({ handle: 'alice', created_at: now }).returning('id').executeTakeFirstOrThrow();
      await old.insertInto('orgs').values({ id: 1, created_at: now }).execute();
      await old.insertInto('memberships').values({ user_id: user.id, org_id: 1 }).execute();
      const ids = [0, 42, 7, Number.MAX_SAFE_INTEGER];
      await old
        .insertInto('tasks')
        .values([
          ...ids.map((id) => ({ owner_id: user.id, context: `old ${id}`, is_completed: 0, source: 'todoist', source_id: id, session_id: null, created_at: now, updated_at: now })),
          { owner_id: user.id, context: 'direct', is_completed: 1, source: null, source_id: null, session_id: null, created_at: now, updated_at: now },
        ])
        .execute();

      expect(await storage.migrate()).toContain('0007_string_source_id');
      const token = (await createAuthService(storage).issueToken('alice', {})).token;
      const app = await buildApp({ config: testConfig(database.url), storage, logger: false });
      try {
        const alice = new Client(app, token);
        const listed = await alice.get<Page>('/api/v1/tasks');
        expect(listed.body.data.map((task) => [task.context, task.source, task.source_id])).toEqual([
          ...ids.map((id) => [`old ${id}`, 'todoist', id]),
          ['direct', null, null],
        ]);
        const session = await newSession(alice, 1);
        const res = await alice.post<BulkResponse>('/api/v1/tasks/bulk', {
          session_id: session,
          tasks: [
            { context: 'renamed', source: 'todoist', source_id: '42' },
            { context: 'new', source: 'todoist', source_id: '43' },
          ],
        });
        expect(res.status, res.text).toBe(200);
        expect(res.body.meta).toEqual({ created: 1, updated: 1, unchanged: 0 });
        expect(res.body.data[0]).toMatchObject({ id: listed.body.data[1]?.id, context: 'renamed', source_id: '42' });
        expect((await alice.post('/api/v1/tasks', { context: 'dup', session_id: session, source: 'todoist', source_id: String(Number.MAX_SAFE_INTEGER) })).status).toBe(409);
      } finally {
        await app.close();
      }
    } finally {
      await storage.close();
    }
  });
});
