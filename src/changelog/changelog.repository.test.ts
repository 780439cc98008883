import { expect, it } from 'vitest';
import { describeEachDialect, useTestApp } from '../../test/helpers/harness.js';
import type { NewChange } from '../storage/tables.js';
import { createChangesRepository } from './changelog.repository.js';

const entry = (recordId: number, ownerId: number): NewChange => ({
  kind: 'task',
  action: 'created',
  record_id: recordId,
  org_id: null,
  owner_id: ownerId,
  audience: null,
  actor_id: ownerId,
  changed_at: new Date().toISOString(),
});

describeEachDialect('change log', (dialect) => {
  const t = useTestApp(dialect, { alice: [1], bob: [1] });

  const userId = async (handle: string) =>
    (await t.storage.db.selectFrom('users').select('id').where('handle', '=', handle).executeTakeFirstOrThrow()).id;

  it('records every session and task write in the same transaction, in commit order', async () => {
    const changes = createChangesRepository(t.storage);
    const alice = await userId('alice');
    const start = await changes.head();
    const s = (await t.alice.post('/api/v1/sessions', { org_id: 1, name: 'logged', type: 'standard', duration: 30, schedule: '2026-05-01', time: '9:00 AM' })).body.data;
    const task = (await t.alice.post('/api/v1/tasks', { context: 'logged task', session_id: s.id })).body.data;
    await t.alice.put(`/api/v1/sessions/${s.id}`, { name: 'renamed' });
    await t.alice.put(`/api/v1/tasks/${task.id}`, { is_completed: true });
    await t.alice.delete(`/api/v1/tasks/${task.id}`);
    await t.alice.delete(`/api/v1/sessions/${s.id}`);
    await createChangesRepository(t.storage).sequence();
    // A refused write logs nothing.
    expect((await t.bob.put(`/api/v1/sessions/${s.id}`, { name: 'not mine' })).status).toBe(404);
    const rows = await changes.after({ orgIds: [1], ownerId: alice, after: start, limit: 100 });
    expect(rows.map((r) => `${r.kind}:${r.action}:${r.record_id === s.id || r.record_id === Number(task.id) ? 'x' : r.record_id}`)).toEqual([
      'session:created:x',
      'task:created:x',
      'session:updated:x',
      'task:updated:x',
      'task:deleted:x',
      'session:deleted:x',
    ]);
    const deleted = rows.at(-1);
    expect(deleted?.audience).toBe(JSON.stringify({ public: false, users: [alice] }));
  });

  it('logs a bulk import as one change per task, created or updated', async () => {
    const changes = createChangesRepository(t.storage);
    const alice = await userId('alice');
    const s = (await t.alice.post('/api/v1/sessions', { org_id: 1, name: 'bulk', type: 'standard', duration: 30, schedule: '2026-05-01', time: '9:00 AM' })).body.data;
    const tasks = [1, 2, 3].map((n) => ({ context: `t${n}`, source: 'linear', source_id: n }));
    await t.alice.post('/api/v1/tasks/bulk', { session_id: s.id, tasks: tasks.slice(0, 2) });
    await createChangesRepository(t.storage).sequence();
    const start = await changes.head();
    // Two edited, one new, and an unchanged one that logs nothing (contract section 10).
    const again = [...tasks.slice(0, 2).map((x) => ({ ...x, context: `${x.context} edited` })), tasks[2], { context: 't4', source: 'linear', source_id: 4 }];
    await t.alice.post('/api/v1/tasks/bulk', { session_id: s.id, tasks: again.slice(0, 3) });
    await createChangesRepository(t.storage).sequence();
    const middle = await changes.head();
    await t.alice.post('/api/v1/tasks/bulk', { session_id: s.id, tasks: again });
    await createChangesRepository(t.storage).sequence();
    const rows = await changes.after({ orgIds: [], ownerId: alice, after: start, limit: 100 });
    expect(rows.map((r) => r.action).sort()).toEqual(['created', 'created', 'updated', 'updated']);
    expect((await changes.after({ orgIds: [], ownerId: alice, after: middle, limit: 100 })).map((r) => r.action)).toEqual(['created']);
  });

  it('never lets a reader pass a change that commits later with a smaller id', async () => {
    const changes = createChangesRepository(t.storage);
    const owner = await userId('bob');
    await createChangesRepository(t.storage).sequence();
    const seen: number[] = [];
    let cursor = await changes.head();
    const poll = async () => {
      await createChangesRepository(t.storage).sequence();
      const rows = await changes.after({ orgIds: [], ownerId: owner, after: cursor, limit: 100 });
      seen.push(...rows.map((r) => r.record_id));
      cursor = rows.at(-1)?.position ?? cursor;
    };
    if (dialect === 'postgres') {
      let release: () => void = () => undefined;
      const held = new Promise<void>((r) => (release = r));
      // The slow writer takes its id first, then waits while faster writers commit.
      const slow = t.storage.db.transaction().execute(async (trx) => {
        await changes.record(trx, [entry(1, owner)]);
        await held;
      });
      await new Promise((r) => setTimeout(r, 50));
      for (let i = 2; i <= 4; i++) await t.storage.transaction((trx) => changes.record(trx, [entry(i, owner)]));
      await poll();
      expect(seen).toEqual([2, 3, 4]);
      release();
      await slow;
      await poll();
      // The late commit comes after what was read, not lost behind the cursor.
      expect(seen).toEqual([2, 3, 4, 1]);
    } else {
      for (let i = 1; i <= 4; i++) await t.storage.transaction((trx) => changes.record(trx, [entry(i, owner)]));
      await poll();
      expect(seen).toEqual([1, 2, 3, 4]);
    }
  });
});
