import { expect, it } from 'vitest';
import { describeEachDialect, useTestApp } from '../../../test/helpers/harness.js';
import { createSessionsRepository } from './sessions.repository.js';
import { addDays } from '../recurrence/recurrence.dates.js';
import { createSession, listAllSessions } from './sessions.test-helpers.js';

/*
 * A listing keeps the rows it read and reads only their row_version on later pages
 * (sessions.repository.ts, migration 0027). Whatever changes a row (the API, another
 * instance, a statement no code of ours wrote), the next page shows the row as it is; a
 * row read inside a transaction that is rolled back is never shown.
 */
describeEachDialect('rows kept between pages', (dialect) => {
  const t = useTestApp(dialect, { alice: [1], bob: [1] });
  const names = async () => (await listAllSessions(t.alice, 'keyword=kept', 50)).map((s) => `${s.name}|${s.collaborator.join(',')}|${s.status}`).sort();

  it('shows every change made since a row was kept, however it was made', async () => {
    const a = await createSession(t.alice, { name: 'kept a' });
    const b = await createSession(t.alice, { name: 'kept b', is_public: true });
    expect(await names()).toEqual(['kept a||waiting', 'kept b||waiting']);
    // Through the API: a rename, a collaborator, a completion.
    expect((await t.alice.put(`/api/v1/sessions/${a.id}`, { name: 'kept a2', collaborator: ['bob'] })).status).toBe(200);
    expect((await t.alice.post(`/api/v1/sessions/${b.id}/complete`)).status).toBe(200);
    expect(await names()).toEqual(['kept a2|bob|waiting', 'kept b||completed']);
    // A collaborator row alone, and a plain statement on the table: what another instance or an operator may do.
    await t.storage.db.deleteFrom('session_collaborators').where('session_id', '=', a.id).execute();
    expect(await names()).toEqual(['kept a2||waiting', 'kept b||completed']);
    await t.storage.db.updateTable('sessions').set({ name: 'kept a3', search_name: 'kept a3' }).where('id', '=', a.id).execute();
    expect(await names()).toEqual(['kept a3||waiting', 'kept b||completed']);
  });

  // A series' next dates and their participants come with its key (issue 36): each page reads them afresh.
  it('shows a series\' next occurrence as it is now: who joined it, and where an edit moved it', async () => {
    const tomorrow = addDays(new Date().toISOString().slice(0, 10), 1);
    const series = await createSession(t.alice, { name: 'kept series', is_public: true, is_recurring: 1, occurrence: 'daily', schedule: tomorrow, timezone: 'UTC' });
    const shown = async () => (await listAllSessions(t.alice, 'keyword=kept%20series', 50)).map((s) => `${s.starts_at.slice(0, 10)}|${s.participants_count}`);
    expect(await shown()).toEqual([`${tomorrow}|1`]);
    expect((await t.bob.post(`/api/v1/sessions/${series.id}/join?date=${tomorrow}`)).status).toBe(200);
    expect(await shown()).toEqual([`${tomorrow}|2`]);
    // Moved a day later: its first occurrence is one nobody joined yet.
    expect((await t.alice.put(`/api/v1/sessions/${series.id}`, { schedule: addDays(tomorrow, 1) })).status).toBe(200);
    expect(await shown()).toEqual([`${addDays(tomorrow, 1)}|1`]);
  });

  it('never keeps a row read inside a transaction that does not commit', async () => {
    const s = await createSession(t.alice, { name: 'kept rollback' });
    expect(await names()).toContain('kept rollback||waiting');
    const repository = createSessionsRepository(t.storage);
    const alice = { id: (await t.storage.db.selectFrom('users').select('id').where('handle', '=', 'alice').executeTakeFirstOrThrow()).id, handle: 'alice', orgIds: [1], timezone: 'UTC' };
    await expect(
      t.storage.db.transaction().execute(async (trx) => {
        await trx.updateTable('sessions').set({ name: 'kept never', search_name: 'kept never' }).where('id', '=', s.id).execute();
        const inside = await repository.byIds(trx, { ids: [s.id], listing: { user: alice, filters: { orgIds: [1] } } });
        expect(inside.get(s.id)?.name).toBe('kept never');
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    // The same repository, outside the transaction: the committed row, not the one it saw inside.
    const after = await repository.byIds(t.storage.db, { ids: [s.id], listing: { user: alice, filters: { orgIds: [1] } } });
    expect(after.get(s.id)?.name).toBe('kept rollback');
    expect(await names()).toContain('kept rollback||waiting');
    expect(await names()).not.toContain('kept never||waiting');
  });
});
