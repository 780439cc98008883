import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { describeEachDialect, useTestApp } from '../../../test/helpers/harness.js';
import { createSession } from './sessions.test-helpers.js';

const addDays = (date: string, n: number) => new Date(Date.parse(`${date}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

/*
 * session_access is kept by triggers (migration 0026) and decides what listings and the
 * visibility rule count as a reader's own: after every kind of write it must hold exactly one
 * row per creator, collaborator and participant (any occurrence) of each session, with the
 * session's org, public flag, start, type, status and folded name (0029), is_recurring (0030) and
 * creator (0031).
 */
describeEachDialect('session access rows', (dialect) => {
  const t = useTestApp(dialect, { alice: [1], bob: [1], erin: [1] });

  async function expectAccessMatchesTies(): Promise<void> {
    const { rows: actual } = await sql<Record<string, unknown>>`
      select user_id, session_id, org_id, starts_at, is_public, type, status, search_name, is_recurring, created_by from session_access order by user_id, session_id`.execute(t.storage.db);
    const { rows: expected } = await sql<Record<string, unknown>>`
      select ties.user_id, s.id as session_id, s.org_id, s.starts_at, s.is_public, s.type, s.status, s.search_name, s.is_recurring, s.created_by
      from (select created_by as user_id, id as session_id from sessions
            union select user_id, session_id from session_collaborators
            union select user_id, session_id from session_participants) ties
      join sessions s on s.id = ties.session_id order by ties.user_id, s.id`.execute(t.storage.db);
    expect(actual).toEqual(expected);
    expect(actual.length).toBeGreaterThan(0);
  }

  it('holds exactly the ties after creates, collaborator changes, joins, leaves, edits, splits and deletes', async () => {
    const start = addDays(new Date().toISOString().slice(0, 10), 2);
    const series = await createSession(t.alice, { name: 'team', collaborator: ['bob'], schedule: start, time: '9:00 AM', timezone: 'UTC', is_recurring: 1, occurrence: 'daily', recurring_ends: addDays(start, 9) });
    const one = await createSession(t.alice, { name: 'one-off', is_public: true, schedule: start });
    await expectAccessMatchesTies();

    expect((await t.erin.post(`/api/v1/sessions/${one.id}/join`)).status).toBe(200);
    expect((await t.alice.put(`/api/v1/sessions/${series.id}`, { collaborator: ['erin'] })).status).toBe(200);
    await expectAccessMatchesTies();
    expect((await t.erin.post(`/api/v1/sessions/${series.id}/join?date=${addDays(start, 6)}`)).status).toBe(200);
    expect((await t.erin.post(`/api/v1/sessions/${series.id}/join?date=${addDays(start, 1)}`)).status).toBe(200);
    expect((await t.alice.put(`/api/v1/sessions/${series.id}`, { collaborator: [] })).status).toBe(200);
    // Still a participant: the tie stays.
    await expectAccessMatchesTies();
    expect((await t.alice.get('/api/v1/sessions?source=user')).body.data.length).toBeGreaterThan(0);
    expect((await t.erin.get(`/api/v1/sessions/${series.id}`)).status).toBe(200);

    // Start, flag and org copies follow the session; so do type, status and name.
    expect((await t.alice.put(`/api/v1/sessions/${one.id}`, { is_public: false, time: '11:00 AM' })).status).toBe(200);
    await expectAccessMatchesTies();
    expect((await t.alice.put(`/api/v1/sessions/${one.id}`, { type: 'drop-in', name: 'Renamed ÉCLAIR' })).status).toBe(200);
    await expectAccessMatchesTies();

    // A split hands later participation to the new series: erin is tied to both.
    const split = await t.alice.put(`/api/v1/sessions/${series.id}?date=${addDays(start, 4)}&scope=following`, { name: 'team v2' });
    expect(split.status, split.text).toBe(201);
    await expectAccessMatchesTies();
    const later = split.body.data.id as number;
    expect((await t.erin.get(`/api/v1/sessions/${later}`)).status).toBe(200);

    // Leaving the last joined occurrence ends the tie: the private series is gone from sight.
    expect((await t.erin.post(`/api/v1/sessions/${later}/leave?date=${addDays(start, 6)}`)).status).toBe(200);
    await expectAccessMatchesTies();
    expect((await t.erin.get(`/api/v1/sessions/${later}`)).status).toBe(404);
    expect((await t.erin.post(`/api/v1/sessions/${one.id}/leave`)).status).toBe(200);
    await expectAccessMatchesTies();

    expect((await t.alice.put(`/api/v1/sessions/${one.id}`, { status: 'completed' })).status).toBe(200);
    await expectAccessMatchesTies();
    expect((await t.alice.delete(`/api/v1/sessions/${series.id}`)).status).toBe(204);
    expect((await t.alice.delete(`/api/v1/sessions/${one.id}`)).status).toBe(204);
    await expectAccessMatchesTies();
  });
});
