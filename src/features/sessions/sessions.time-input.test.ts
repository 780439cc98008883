import { expect, it } from 'vitest';
import { describeEachDialect, errorPaths, useTestApp } from '../../../test/helpers/harness.js';
import { type SessionRecord, createSession, sessionBody } from './sessions.test-helpers.js';

/*
 * Contract section 10, "`time` input": besides "9:00 AM", the 24-hour "09:00", "9:00" and
 * "21:30" are accepted on create and update; answers keep the 12-hour form.
 */

describeEachDialect('sessions: 24-hour `time` input', (dialect) => {
  const t = useTestApp(dialect, { ada: [1] });

  it.each([
    ['09:00', '9:00 AM', '2026-01-15T09:00:00.000Z'],
    ['9:00', '9:00 AM', '2026-01-15T09:00:00.000Z'],
    ['21:30', '9:30 PM', '2026-01-15T21:30:00.000Z'],
    ['0:05', '12:05 AM', '2026-01-15T00:05:00.000Z'],
    ['12:00', '12:00 PM', '2026-01-15T12:00:00.000Z'],
    ['23:59', '11:59 PM', '2026-01-15T23:59:00.000Z'],
    ['9:00 AM', '9:00 AM', '2026-01-15T09:00:00.000Z'],
  ])('creates with %j, answered as %j', async (time, shown, startsAt) => {
    const s = await createSession(t.ada, { schedule: '2026-01-15', time, timezone: 'UTC' });
    expect([s.time, s.starts_at]).toEqual([shown, startsAt]);
    const read = await t.ada.get<{ data: SessionRecord }>(`/api/v1/sessions/${s.id}`);
    expect(read.body.data.time).toBe(shown);
  });

  it('updates with a 24-hour time, answered in the 12-hour form', async () => {
    const s = await createSession(t.ada, { schedule: '2026-01-15', time: '9:00 AM', timezone: 'Europe/Berlin' });
    const res = await t.ada.put<{ data: SessionRecord }>(`/api/v1/sessions/${s.id}`, { time: '21:30' });
    expect(res.status, res.text).toBe(200);
    expect([res.body.data.time, res.body.data.starts_at]).toEqual(['9:30 PM', '2026-01-15T20:30:00.000Z']);
  });

  it.each(['24:00', '9:60', '9:00 XM', '13:00 PM', '9:5', '009:00', ' 9:00', '21:30 ', '9.00', '-1:00'])('refuses %j with 422 on create and update', async (time) => {
    expect(errorPaths(await t.ada.post('/api/v1/sessions', sessionBody({ time })))).toEqual(['/time']);
    const s = await createSession(t.ada, { time: '9:00 AM' });
    expect(errorPaths(await t.ada.put(`/api/v1/sessions/${s.id}`, { time }))).toEqual(['/time']);
  });
});
