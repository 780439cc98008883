import { beforeAll, expect, it } from 'vitest';
import { type BulkResponse, type One, type TaskRecord, listAllTasks, newSession, newTask } from './tasks.test-helpers.js';
import { describeEachDialect, useTestApp } from '../../../test/helpers/harness.js';

/*
 * Tasks belong to their owner alone: a colleague in the same org and a stranger in
 * another org both see 404 (never 403) and never find them in a listing.
 */
describeEachDialect('task visibility: owner, same-org colleague, other org', (dialect) => {
  const t = useTestApp(dialect, { owner: [1], colleague: [1], stranger: [2], both: [1, 2] });
  let publicSession: number;
  let task: TaskRecord;
  let imported: TaskRecord;

  beforeAll(async () => {
    publicSession = await newSession(t.owner, 1, { is_public: true });
    task = await newTask(t.owner, { context: 'secret plan', session_id: publicSession });
    const res = await t.owner.post<BulkResponse>('/api/v1/tasks/bulk', {
      session_id: publicSession,
      tasks: [{ context: 'imported secret', source: 'todoist', source_id: 1 }],
    });
    expect(res.status, res.text).toBe(200);
    imported = res.body.data[0]!;
    // Others have tasks of their own in the same (public) session.
    for (const other of [t.colleague, t.both]) await newTask(other, { context: 'mine', session_id: publicSession });
    await newTask(t.stranger, { context: 'mine', session_id: await newSession(t.stranger, 2) });
  });

  it('the owner sees and lists their tasks', async () => {
    expect((await t.owner.get<One>(`/api/v1/tasks/${task.id}`)).body.data).toEqual(task);
    expect((await listAllTasks(t.owner, '', 100)).map((x) => x.id)).toEqual([task.id, imported.id]);
  });

  it('everyone else gets the same 404 as for a task that does not exist', async () => {
    const absent = await t.owner.get<Record<string, unknown>>('/api/v1/tasks/987654321');
    expect(absent.status).toBe(404);
    const strip = (body: Record<string, unknown>) => ({ ...body, instance: undefined });
    for (const other of [t.colleague, t.stranger, t.both]) {
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
    expect((await t.owner.get<One>(`/api/v1/tasks/${task.id}`)).body.data).toEqual(task);
    expect((await t.owner.get<One>(`/api/v1/tasks/${imported.id}`)).body.data).toEqual(imported);
  });

  it('never appear in anyone else’s list, whatever the filter', async () => {
    for (const other of [t.colleague, t.stranger, t.both]) {
      for (const query of ['', `session_id=${publicSession}`, 'is_completed=false', 'is_completed=true']) {
        const seen = await listAllTasks(other, query, 1);
        for (const x of seen) expect(x.owner).toBe(other === t.colleague ? 'colleague' : other === t.stranger ? 'stranger' : 'both');
        expect(seen.map((x) => x.id)).not.toContain(task.id);
        expect(seen.map((x) => x.id)).not.toContain(imported.id);
      }
    }
  });

  it('a colleague importing the same origin gets a task of their own', async () => {
    const res = await t.colleague.post<BulkResponse>('/api/v1/tasks/bulk', {
      session_id: publicSession,
      tasks: [{ context: 'colleague’s copy', source: 'todoist', source_id: 1 }],
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.meta).toEqual({ created: 1, updated: 0, unchanged: 0 });
    expect(res.body.data[0]!.id).not.toBe(imported.id);
    expect((await t.owner.get<One>(`/api/v1/tasks/${imported.id}`)).body.data.context).toBe('imported secret');
  });

  it('a stranger cannot commit a task to a session of an org they are not in', async () => {
    const res = await t.stranger.post<{ errors: unknown }>('/api/v1/tasks', { context: 'x', session_id: publicSession });
    expect(res.status).toBe(422);
    expect((res.body.errors as { path: string }[]).map((e) => e.path)).toEqual(['/session_id']);
    // A member of both orgs can.
    expect((await t.both.post('/api/v1/tasks', { context: 'x', session_id: publicSession })).status).toBe(201);
  });
});
