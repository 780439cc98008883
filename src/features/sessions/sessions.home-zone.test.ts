import { expect, it } from 'vitest';
import { describeEachDialect, errorPaths, useTestApp } from '../../../test/helpers/harness.js';
import { type SessionRecord, createSession, listAllSessions } from './sessions.test-helpers.js';

/*
 * Contract section 6, "A home time zone per user": a session created without `timezone`
 * takes its creator's home zone, so a client that knows nothing of zones gets "9:00 AM"
 * at 9:00 where its user lives; a later change of the home zone moves nothing.
 */

const ME = '/api/v1/me';

describeEachDialect('sessions in the creator’s home time zone', (dialect) => {
  const t = useTestApp(dialect, { berta: [1], ulla: [1] });

  const get = async (id: number, query = '') => {
    const res = await t.berta.get<{ data: SessionRecord }>(`/api/v1/sessions/${id}${query}`);
    expect(res.status, res.text).toBe(200);
    return res.body.data;
  };
  const instants = (s: SessionRecord) => ({ timezone: s.timezone, starts_at: s.starts_at, ends_at: s.ends_at, rrule: s.rrule });

  it('"9:00 AM" without a zone is 9:00 in Berlin for a user in Berlin, winter and summer', async () => {
    expect((await t.berta.put(ME, { timezone: 'Europe/Berlin' })).status).toBe(200);
    const winter = await createSession(t.berta, { schedule: '2026-01-15', time: '9:00 AM', duration: 30 });
    expect([winter.timezone, winter.starts_at, winter.ends_at]).toEqual(['Europe/Berlin', '2026-01-15T08:00:00.000Z', '2026-01-15T08:30:00.000Z']);
    const summer = await createSession(t.berta, { schedule: '2026-07-15', time: '9:00 AM', duration: 30 });
    expect([summer.timezone, summer.starts_at, summer.ends_at]).toEqual(['Europe/Berlin', '2026-07-15T07:00:00.000Z', '2026-07-15T07:30:00.000Z']);
    // As stored, not only as answered.
    expect(await get(winter.id)).toMatchObject({ timezone: 'Europe/Berlin', starts_at: '2026-01-15T08:00:00.000Z' });
  });

  it('a user left on the default gets UTC, and a zone sent in the body wins over the home zone', async () => {
    const plain = await createSession(t.ulla, { schedule: '2026-01-15', time: '9:00 AM' });
    expect([plain.timezone, plain.starts_at]).toEqual(['UTC', '2026-01-15T09:00:00.000Z']);
    const explicit = await createSession(t.berta, { schedule: '2026-01-15', time: '9:00 AM', timezone: 'America/New_York' });
    expect([explicit.timezone, explicit.starts_at]).toEqual(['America/New_York', '2026-01-15T14:00:00.000Z']);
    const utc = await createSession(t.berta, { schedule: '2026-07-15', time: '9:00 AM', timezone: 'UTC' });
    expect([utc.timezone, utc.starts_at]).toEqual(['UTC', '2026-07-15T09:00:00.000Z']);
    // A bad zone in the body is refused, not replaced by the home zone.
    expect(errorPaths(await t.berta.post('/api/v1/sessions', { org_id: 1, name: 'x', type: 'standard', duration: 30, schedule: '2026-01-15', time: '9:00 AM', timezone: 'Mars/Base' }))).toEqual(['/timezone']);
  });

  it('a series takes the home zone for every occurrence, across the change to summer time', async () => {
    await t.berta.put(ME, { timezone: 'Europe/Berlin' });
    const series = await createSession(t.berta, { name: 'Standup', schedule: '2026-03-27', time: '9:00 AM', duration: 15, is_recurring: 1, occurrence: 'daily', recurring_ends: '2026-03-31' });
    expect(series.timezone).toBe('Europe/Berlin');
    expect(series.rrule).toMatch(/^DTSTART;TZID=Europe\/Berlin:20260327T090000\n/);
    const occurrences = await t.berta.get<{ data: { occurrence_date: string; starts_at: string }[] }>(`/api/v1/sessions/${series.id}/occurrences?from=2026-03-27&to=2026-03-31`);
    expect(occurrences.body.data.map((o) => o.starts_at)).toEqual([
      '2026-03-27T08:00:00.000Z',
      '2026-03-28T08:00:00.000Z',
      '2026-03-29T07:00:00.000Z',
      '2026-03-30T07:00:00.000Z',
      '2026-03-31T07:00:00.000Z',
    ]);
  });

  it('changing the home zone afterwards moves no session; a PUT without timezone keeps the session’s zone', async () => {
    await t.berta.put(ME, { timezone: 'Europe/Berlin' });
    const one = await createSession(t.berta, { name: 'Before the move', schedule: '2026-11-02', time: '9:00 AM' });
    const series = await createSession(t.berta, { name: 'Weekly before the move', schedule: '2026-11-02', time: '9:00 AM', is_recurring: 1, occurrence: 'weekly', recurring_ends: '2026-11-30' });
    const before = { one: await get(one.id), series: await get(series.id) };
    const listedBefore = await listAllSessions(t.berta, 'day_start=2026-11-01&day_ends=2026-11-30', 100);
    const occurrencesBefore = (await t.berta.get(`/api/v1/sessions/${series.id}/occurrences?from=2026-11-01&to=2026-11-30`)).body;

    const moved = await t.berta.put(ME, { timezone: 'Asia/Tokyo' });
    expect(moved.body).toMatchObject({ data: { timezone: 'Asia/Tokyo' } });

    for (const [name, id] of [['one', one.id], ['series', series.id]] as const) {
      const after = await get(id);
      expect(instants(after), name).toEqual(instants(before[name]));
      expect(after.updated_at, name).toBe(before[name].updated_at);
      expect(after.timezone, name).toBe('Europe/Berlin');
    }
    expect(await listAllSessions(t.berta, 'day_start=2026-11-01&day_ends=2026-11-30', 100)).toEqual(listedBefore);
    expect((await t.berta.get(`/api/v1/sessions/${series.id}/occurrences?from=2026-11-01&to=2026-11-30`)).body).toEqual(occurrencesBefore);
    const dated = await listAllSessions(t.berta, 'date=2026-11-02', 100);
    expect(dated.find((s) => s.id === one.id)?.starts_at).toBe('2026-11-02T08:00:00.000Z');

    // An update that does not send timezone leaves the session where it was, even its time changing.
    const renamed = await t.berta.put<{ data: SessionRecord }>(`/api/v1/sessions/${one.id}`, { name: 'Renamed', time: '10:00 AM' });
    expect(renamed.status, renamed.text).toBe(200);
    expect([renamed.body.data.timezone, renamed.body.data.starts_at]).toEqual(['Europe/Berlin', '2026-11-02T09:00:00.000Z']);
    // Sending one moves it.
    const rezoned = await t.berta.put<{ data: SessionRecord }>(`/api/v1/sessions/${one.id}`, { timezone: 'Asia/Tokyo' });
    expect([rezoned.body.data.timezone, rezoned.body.data.starts_at]).toEqual(['Asia/Tokyo', '2026-11-02T01:00:00.000Z']);

    // Sessions created from now on take the new home zone.
    const next = await createSession(t.berta, { name: 'After the move', schedule: '2026-11-02', time: '9:00 AM' });
    expect([next.timezone, next.starts_at]).toEqual(['Asia/Tokyo', '2026-11-02T00:00:00.000Z']);
  });
});
