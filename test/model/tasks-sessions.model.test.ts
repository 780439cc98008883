import fc from 'fast-check';
import { afterAll, expect, it } from 'vitest';
import { type Client, describeEachDialect, listAll, useTestApp } from '../helpers/harness.js';
import { propertySeed } from '../helpers/seed.js';
import { report } from '../helpers/report.js';

/*
 * Stateful model test: random sequences of session and task operations against
 * the real API and a plain in-memory model; every listing must equal the model.
 * Replay with FC_SEED; FC_RUNS sets the number of sequences.
 */
const SEED = propertySeed();
const RUNS = Number(process.env.FC_RUNS ?? 20);

interface ModelTask {
  context: string;
  is_completed: boolean;
  source: string | null;
  source_id: number | string | null;
  session_id: number | null;
}
interface Model {
  sessions: Map<number, string>;
  tasks: Map<string, ModelTask>;
}
interface Real {
  client: Client;
  org: number;
}

const counts = new Map<string, number>();
const tally = (name: string) => counts.set(name, (counts.get(name) ?? 0) + 1);
const nth = <T>(items: Iterable<T>, pick: number): T | undefined => {
  const list = [...items];
  return list.length === 0 ? undefined : list[pick % list.length];
};
const text = fc.string({ minLength: 1, maxLength: 30 }).filter((s) => s.trim().length > 0);

async function expectListingsEqualModel(m: Model, r: Real) {
  const tasks = await listAll<{ id: string } & ModelTask>(r.client, '/api/v1/tasks', '', 7);
  expect(new Map(tasks.map((t) => [t.id, { context: t.context, is_completed: t.is_completed, source: t.source, source_id: t.source_id, session_id: t.session_id }]))).toEqual(m.tasks);
  expect(tasks.map((t) => Number(t.id))).toEqual([...m.tasks.keys()].map(Number).sort((a, b) => a - b));
  const sessions = await listAll<{ id: number; name: string }>(r.client, '/api/v1/sessions', `org_id=${r.org}`, 7);
  expect(new Map(sessions.map((s) => [s.id, s.name]))).toEqual(m.sessions);
}

type Cmd = fc.AsyncCommand<Model, Real>;

class CreateSession implements Cmd {
  constructor(readonly name: string) {}
  check = () => true;
  async run(m: Model, r: Real) {
    tally('create session');
    const res = await r.client.post<{ data: { id: number } }>('/api/v1/sessions', { org_id: r.org, name: this.name, type: 'standard', duration: 25, schedule: '2026-12-01', time: '9:00 AM' });
    expect(res.status).toBe(201);
    m.sessions.set(res.body.data.id, this.name.trim());
  }
  toString = () => `CreateSession(${JSON.stringify(this.name)})`;
}

class RenameSession implements Cmd {
  constructor(readonly pick: number, readonly name: string) {}
  check = (m: Readonly<Model>) => m.sessions.size > 0;
  async run(m: Model, r: Real) {
    tally('update session');
    const id = nth(m.sessions.keys(), this.pick) as number;
    const res = await r.client.put(`/api/v1/sessions/${id}`, { name: this.name });
    expect(res.status).toBe(200);
    m.sessions.set(id, this.name.trim());
  }
  toString = () => `RenameSession(${this.pick}, ${JSON.stringify(this.name)})`;
}

class DeleteSession implements Cmd {
  constructor(readonly pick: number) {}
  check = (m: Readonly<Model>) => m.sessions.size > 0;
  async run(m: Model, r: Real) {
    tally('delete session');
    const id = nth(m.sessions.keys(), this.pick) as number;
    expect((await r.client.delete(`/api/v1/sessions/${id}`)).status).toBe(204);
    m.sessions.delete(id);
    // Tasks outlive their session, detached from it.
    for (const t of m.tasks.values()) if (t.session_id === id) t.session_id = null;
  }
  toString = () => `DeleteSession(${this.pick})`;
}

class CreateTask implements Cmd {
  constructor(readonly pick: number, readonly context: string, readonly completed: boolean) {}
  check = (m: Readonly<Model>) => m.sessions.size > 0;
  async run(m: Model, r: Real) {
    tally('create task');
    const sessionId = nth(m.sessions.keys(), this.pick) as number;
    const res = await r.client.post<{ data: { id: string } }>('/api/v1/tasks', { context: this.context, session_id: sessionId, is_completed: this.completed });
    expect(res.status).toBe(201);
    m.tasks.set(res.body.data.id, { context: this.context.trim(), is_completed: this.completed, source: null, source_id: null, session_id: sessionId });
  }
  toString = () => `CreateTask(${this.pick}, ${JSON.stringify(this.context)}, ${this.completed})`;
}

class UpdateTask implements Cmd {
  constructor(readonly pick: number, readonly context: string | undefined, readonly completed: boolean | undefined) {}
  check = (m: Readonly<Model>) => m.tasks.size > 0;
  async run(m: Model, r: Real) {
    tally('update task');
    const id = nth(m.tasks.keys(), this.pick) as string;
    const body = { ...(this.context === undefined ? {} : { context: this.context }), ...(this.completed === undefined ? {} : { is_completed: this.completed }) };
    const res = await r.client.put(`/api/v1/tasks/${id}`, body);
    const task = m.tasks.get(id) as ModelTask;
    if (Object.keys(body).length === 0) {
      expect(res.status).toBe(422);
      return;
    }
    expect(res.status).toBe(200);
    if (this.context !== undefined) task.context = this.context.trim();
    if (this.completed !== undefined) task.is_completed = this.completed;
  }
  toString = () => `UpdateTask(${this.pick}, ${JSON.stringify(this.context)}, ${this.completed})`;
}

class DeleteTask implements Cmd {
  constructor(readonly pick: number) {}
  check = (m: Readonly<Model>) => m.tasks.size > 0;
  async run(m: Model, r: Real) {
    tally('delete task');
    const id = nth(m.tasks.keys(), this.pick) as string;
    expect((await r.client.delete(`/api/v1/tasks/${id}`)).status).toBe(204);
    expect((await r.client.get(`/api/v1/tasks/${id}`)).status).toBe(404);
    m.tasks.delete(id);
  }
  toString = () => `DeleteTask(${this.pick})`;
}

type Item = { context: string; source: string; source_id: number | string };

class BulkImport implements Cmd {
  constructor(readonly pick: number, readonly items: Item[], readonly poison: number | null) {}
  check = (m: Readonly<Model>) => m.sessions.size > 0;
  async run(m: Model, r: Real) {
    tally(this.poison === null ? 'bulk import' : 'bulk import (rejected)');
    const sessionId = nth(m.sessions.keys(), this.pick) as number;
    const tasks = this.items.map((item, i) => (i === this.poison ? { ...item, context: '   ' } : item));
    const res = await r.client.post<{ errors: { path: string }[]; meta: unknown; data: { id: string }[] }>('/api/v1/tasks/bulk', { session_id: sessionId, tasks });
    if (this.poison !== null) {
      // All or nothing: one bad item and no task changes.
      expect(res.status).toBe(422);
      expect(res.body.errors.map((e) => e.path)).toContain(`/tasks/${this.poison}/context`);
      return;
    }
    expect(res.status).toBe(200);
    const byKey = new Map([...m.tasks].filter(([, t]) => t.source !== null).map(([id, t]) => [`${t.source}/${t.source_id}`, id]));
    const distinct = new Set(this.items.map((i) => `${i.source}/${i.source_id}`));
    const created = [...distinct].filter((k) => !byKey.has(k)).length;
    // An item that leaves its task exactly as it is (same context, id sent in the same JSON type) changes nothing.
    const last = new Map(this.items.map((item) => [`${item.source}/${item.source_id}`, item]));
    const unchanged = [...last].filter(([k, item]) => {
      const task = byKey.has(k) ? m.tasks.get(byKey.get(k) as string) : undefined;
      return task !== undefined && task.context === item.context.trim() && typeof task.source_id === typeof item.source_id;
    }).length;
    expect(res.body.meta).toEqual({ created, updated: distinct.size - created - unchanged, unchanged });
    const returned = res.body.data;
    expect(returned).toHaveLength(this.items.length);
    this.items.forEach((item, i) => {
      const id = (returned[i] as { id: string }).id;
      const key = `${item.source}/${item.source_id}`;
      if (byKey.has(key)) expect(id).toBe(byKey.get(key));
      const existing = m.tasks.get(id);
      // An update keeps the task's session and completion; the last duplicate's text and
      // source_id type win (42 and "42" are one task).
      if (existing !== undefined) Object.assign(existing, { context: item.context.trim(), source_id: item.source_id });
      else m.tasks.set(id, { context: item.context.trim(), is_completed: false, source: item.source, source_id: item.source_id, session_id: sessionId });
      byKey.set(key, id);
    });
  }
  toString = () => `BulkImport(${this.pick}, ${JSON.stringify(this.items)}, poison=${this.poison})`;
}

class CheckListings implements Cmd {
  check = () => true;
  async run(m: Model, r: Real) {
    tally('list');
    await expectListingsEqualModel(m, r);
  }
  toString = () => 'CheckListings';
}

// Ids as numbers and as their text: `7` and `"7"` name one external task.
const item = fc.record({ context: text, source: fc.constantFrom('todoist', 'linear'), source_id: fc.oneof(fc.nat(12), fc.nat(12).map(String)) });
const commands = [
  text.map((n) => new CreateSession(n)),
  fc.tuple(fc.nat(), text).map(([p, n]) => new RenameSession(p, n)),
  fc.nat().map((p) => new DeleteSession(p)),
  fc.tuple(fc.nat(), text, fc.boolean()).map(([p, c, done]) => new CreateTask(p, c, done)),
  fc.tuple(fc.nat(), fc.option(text, { nil: undefined }), fc.option(fc.boolean(), { nil: undefined })).map(([p, c, done]) => new UpdateTask(p, c, done)),
  fc.nat().map((p) => new DeleteTask(p)),
  fc
    .tuple(fc.nat(), fc.array(item, { minLength: 1, maxLength: 12 }), fc.option(fc.nat(), { nil: null }))
    .map(([p, items, poison]) => new BulkImport(p, items, poison === null || poison % 4 !== 0 ? null : poison % items.length)),
  fc.constant(new CheckListings()),
];

describeEachDialect('tasks and sessions against a model', (dialect) => {
  const t = useTestApp(dialect);
  let run = 0;
  afterAll(() => {
    report(`[model ${dialect}] seed=${SEED} sequences=${RUNS} commands: ${[...counts].map(([k, n]) => `${k} ${n}`).join(', ')}\n`);
    counts.clear();
  });

  it('keeps every listing equal to the model', async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 40, size: 'large' }), async (cmds) => {
        // Each sequence gets its own user and org, so sequences cannot see each other.
        run++;
        const org = 1000 + run;
        const real: Real = { client: await t.user(`model-${run}`, [org]), org };
        const model: Model = { sessions: new Map(), tasks: new Map() };
        await fc.asyncModelRun(() => ({ model, real }), cmds);
        await expectListingsEqualModel(model, real);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  }, 240_000);
});
