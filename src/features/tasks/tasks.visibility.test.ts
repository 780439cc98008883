import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type BulkResponse,
  type One,
  type TaskRecord,
  listAllTasks,
  newSession,
  newTask,
} from './tasks.test-helpers.js';
import { type Client, type TestApp, createTestApp, describeEachDialect } from '../../../test/helpers/harness.js';

/*
 * Tasks belong to their owner alone: a colleague in the same org and a stranger in
 * another org both see 404 (never 403) and never find them in a listing.
 */
describeEachDialect('task visibility: owner, same-org colleague, other org', (dialect) => {
  let t: TestApp;
  let owner: Client;
  let colleague: Client;
  let stranger: Client;
  let both: Client; // member of both orgs
  let publicSession: number;
  let task: TaskRecord;
  let imported: TaskRecord;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    owner = await t.user('owner', [1]);
    colleague = await t.user('colleague', [1]);
    stranger = await t.user('stranger', [2]);
    both = await t.user('both', [1, 2]);
    publicSession = await newSession(owner, 1, { is_public: true });
    task = await newTask(owner, { context: 'secret plan', session_id: publicSession });
    const res = await owner.post<BulkResponse>('/api/v1/tasks/bulk', {
      session_id: publicSession,
      tasks: [{ context: 'imported secret', source: 'todoist', source_id: 1 }],
    });
    expect(res.status, res.text).toBe(200);
    imported = res.body.data[0]!;
    // Others have tasks of their own in the same (public) session.
    for (const other of [colleague, both]) await newTask(other, { context: 'mine', session_id: publicSession });
    await newTask(stranger, { context: 'mine', session_id: await newSession(stranger, 2) });
  });
  afterAll(() => t.close());

  it('the owner sees and lists their tasks', async () => {
    expect((await owner.get<One>(`/api/v1/tasks/${task.id}`)).body.data).toEqual(task);
    expect((await listAllTasks(owner, '', 100)).map((x) => x.id)).toEqual([task.id, imported.id]);
  });

  it('everyone else gets the same 404 as for a task that does not exist', async () => {
    const absent = await owner.get<Record<string, unknown>>('/api/v1/tasks/987654321');
    expect(absent.status).toBe(404);
    const strip = (body: Record<string, unknown>) => ({ ...body, instance: undefined });
    for (const other of [colleague, stranger, both]) {
      for (const target of [task, imported]) {
        const url = `/api/v1/tasks/${target.id}`;
        for (const res of [
          await other.get<Record<string, unknown>>(url),
          await other.put<Record<string, unknown>>(url, { context: 'hijacked', is_completed: true }),
          await other.delete<Record<string, unknown>>(url),
        ]) {
          expect(res.status, res.text).toBe(404);
          expect(strip(res.body)).toEqual(strip(absent.body));
          expect(res.text).not.toContain('secret');
        }
      }
    }
    // Nothing they tried changed anything.
    expect((await owner.get<One>(`/api/v1/tasks/${task.id}`)).body.data).toEqual(task);
    expect((await owner.get<One>(`/api/v1/tasks/${imported.id}`)).body.data).toEqual(imported);
  });

  it('never appear in anyone else’s list, whatever the filter', async () => {
    for (const other of [colleague, stranger, both]) {
      for (const query of ['', `session_id=${publicSession}`, 'is_completed=false', 'is_completed=true']) {
        const seen = await listAllTasks(other, query, 1);
        for (const x of seen) expect(x.owner).toBe(other === colleague ? 'colleague' : other === stranger ? 'stranger' : 'both');
        expect(seen.map((x) => x.id)).not.toContain(task.id);
        expect(seen.map((x) => x.id)).not.toContain(imported.id);
      }
    }
  });

  it('a colleague importing the same origin gets a task of their own', async () => {
    const res = await colleague.post<BulkResponse>('/api/v1/tasks/bulk', {
      session_id: publicSession,
      tasks: [{ context: 'colleague’s copy', source: 'todoist', source_id: 1 }],
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.meta).toEqual({ created: 1, updated: 0 });
    expect(res.body.data[0]!.id).not.toBe(imported.id);
    expect((await owner.get<One>(`/api/v1/tasks/${imported.id}`)).body.data.context).toBe('imported secret');
  });

  it('a stranger cannot commit a task to a session of an org they are not in', async () => {
    const res = await stranger.post<{ errors: unknown }>('/api/v1/tasks', { context: 'x', session_id: publicSession });
    expect(res.status).toBe(422);
    expect((res.body.errors as { path: string }[]).map((e) => e.path)).toEqual(['/session_id']);
    // A member of both orgs can.
    expect((await both.post('/api/v1/tasks', { context: 'x', session_id: publicSession })).status).toBe(201);
  });
});
