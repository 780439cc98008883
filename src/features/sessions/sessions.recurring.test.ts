import { expect, it } from 'vitest';
import { describeEachDialect, errorPaths, useTestApp } from '../../../test/helpers/harness.js';
import { type SessionRecord, createSession, listAllSessions, sessionBody } from './sessions.test-helpers.js';

const utcToday = () => new Date().toISOString().slice(0, 10);
const addDays = (date: string, n: number) => new Date(Date.parse(`${date}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
const items = (list: SessionRecord[]) => list.map((s) => `${s.name}@${s.occurrence_date}`);

describeEachDialect('recurring sessions over HTTP', (dialect) => {
  const t = useTestApp(dialect, { alice: [1], bob: [1], carol: [2] });

  it('expands a weekly series across a year boundary, merged in order with one-off sessions', async () => {
    const series = await createSession(t.alice, {
      name: 'weekly',
      is_public: true,
      schedule: '2026-12-28',
      time: '9:00 AM',
      timezone: 'Europe/Berlin',
      is_recurring: 1,
      occurrence: 'weekly',
      recurring_days: [1, 3],
      recurring_ends: '2027-01-20',
    });
    expect(series.rrule).toContain('FREQ=WEEKLY;BYDAY=MO,WE');
    await createSession(t.alice, { name: 'early', schedule: '2026-12-30', time: '7:30 AM' }); // 07:30Z, before 08:00Z
    await createSession(t.alice, { name: 'late', schedule: '2026-12-30', time: '8:30 AM' }); // 08:30Z, after 08:00Z
    await createSession(t.alice, { name: 'newyear', schedule: '2027-01-01', time: '12:00 AM' });
    const res = await t.alice.get('/api/v1/sessions?day_start=2026-12-25&day_ends=2027-01-10');
    expect(res.status, res.text).toBe(200);
    const list = res.body.data as SessionRecord[];
    expect(items(list)).toEqual([
      'weekly@2026-12-28', 'early@2026-12-30', 'weekly@2026-12-30', 'late@2026-12-30', 'newyear@2027-01-01', 'weekly@2027-01-04', 'weekly@2027-01-06',
    ]);
    const jan4 = list[5] as SessionRecord;
    expect(jan4).toMatchObject({ id: series.id, starts_at: '2027-01-04T08:00:00.000Z', ends_at: '2027-01-04T09:00:00.000Z', schedule: '2026-12-28' });
    for (const limit of [1, 2, 3, 6]) {
      expect(items(await listAllSessions(t.alice, 'day_start=2026-12-25&day_ends=2027-01-10', limit))).toEqual(items(list));
    }
    expect(items((await t.bob.get('/api/v1/sessions?date=2027-01-06')).body.data)).toEqual(['weekly@2027-01-06']);
    expect((await t.bob.get('/api/v1/sessions?date=2027-01-05')).body.data).toEqual([]);
    expect((await t.bob.get('/api/v1/sessions?date=2027-01-25')).body.data).toEqual([]);
    // Without a date range the series is one record.
    expect((await t.bob.get('/api/v1/sessions?keyword=weekly')).body.data).toHaveLength(1);
    expect((await t.bob.get('/api/v1/sessions?keyword=weekly')).body.data[0]).not.toHaveProperty('occurrence_date');
  });

  it('pages through many interleaved series and one-off sessions exactly once, across DST changes', async () => {
    for (const [tz, time] of [['Europe/Berlin', '1:30 AM'], ['America/New_York', '9:00 PM'], ['UTC', '3:00 AM']] as const) {
      await createSession(t.alice, { name: `mix-${tz}`, schedule: '2026-10-20', recurring_ends: '2026-11-10', time, timezone: tz, is_recurring: 1, occurrence: 'daily' });
    }
    for (const day of ['2026-10-20', '2026-10-25', '2026-11-01', '2026-11-10']) await createSession(t.alice, { name: `mix-one-${day}`, schedule: day, time: '2:00 AM' });
    const q = 'keyword=mix-&day_start=2026-10-20&day_ends=2026-11-10';
    const all = (await t.alice.get(`/api/v1/sessions?${q}&limit=500`)).body.data as SessionRecord[];
    expect(all).toHaveLength(3 * 22 + 4);
    const sorted = [...all].sort((a, b) => (a.starts_at < b.starts_at ? -1 : a.starts_at > b.starts_at ? 1 : a.id - b.id));
    expect(items(all)).toEqual(items(sorted));
    expect(new Set(items(all)).size).toBe(all.length);
    for (const limit of [1, 4, 7, 69, 70]) expect(items(await listAllSessions(t.alice, q, limit))).toEqual(items(all));
  });

  it('follows the wall clock across DST and the month end in monthly series', async () => {
    const daily = await createSession(t.alice, {
      name: 'ny-daily', schedule: '2026-03-07', time: '9:00 AM', timezone: 'America/New_York', is_recurring: 1, occurrence: 'daily', recurring_ends: '2026-03-09',
    });
    const occ = await t.alice.get(`/api/v1/sessions/${daily.id}/occurrences?from=2026-03-01&to=2026-03-31`);
    expect(occ.status, occ.text).toBe(200);
    expect(occ.body.data).toEqual([
      { occurrence_date: '2026-03-07', starts_at: '2026-03-07T14:00:00.000Z', ends_at: '2026-03-07T15:00:00.000Z', phase: 'ended' },
      { occurrence_date: '2026-03-08', starts_at: '2026-03-08T13:00:00.000Z', ends_at: '2026-03-08T14:00:00.000Z', phase: 'ended' },
      { occurrence_date: '2026-03-09', starts_at: '2026-03-09T13:00:00.000Z', ends_at: '2026-03-09T14:00:00.000Z', phase: 'ended' },
    ]);
    const monthly = await createSession(t.alice, {
      name: 'month-end', schedule: '2026-01-31', is_recurring: 1, occurrence: 'monthly', recurring_month_option: 'exact', fallback_option: 1,
    });
    const dates = (await t.alice.get(`/api/v1/sessions/${monthly.id}/occurrences?from=2026-01-01&to=2026-05-31`)).body.data.map(
      (o: { occurrence_date: string }) => o.occurrence_date,
    );
    expect(dates).toEqual(['2026-01-31', '2026-02-28', '2026-03-31', '2026-04-30', '2026-05-31']);
    const skip = await createSession(t.alice, { name: 'skip', schedule: '2026-01-31', is_recurring: 1, occurrence: 'monthly', recurring_month_option: 'exact' });
    expect((await t.alice.get(`/api/v1/sessions/${skip.id}/occurrences?from=2026-01-01&to=2026-05-31`)).body.data.map((o: { occurrence_date: string }) => o.occurrence_date)).toEqual([
      '2026-01-31', '2026-03-31', '2026-05-31',
    ]);
    const lastFriday = await createSession(t.alice, {
      name: 'last-friday', schedule: '2026-01-01', recurring_start: '2026-01-01', is_recurring: 1, occurrence: 'monthly',
      recurring_month_option: 'week_day', recurring_month_week_pos: -1, recurring_month_week_day: 5,
    });
    const listed = (await t.alice.get('/api/v1/sessions?keyword=last-friday&day_start=2026-01-15&day_ends=2026-03-31')).body.data as SessionRecord[];
    expect(listed.map((s) => s.occurrence_date)).toEqual(['2026-01-30', '2026-02-27', '2026-03-27']);
    expect(listed.every((s) => s.id === lastFriday.id)).toBe(true);
  });

  it('defaults weekly days and the monthly week position to the start date', async () => {
    const dates = async (overrides: Record<string, unknown>, from: string, to: string) => {
      const s = await createSession(t.alice, { name: 'defaults', is_recurring: 1, ...overrides });
      const res = await t.alice.get(`/api/v1/sessions/${s.id}/occurrences?from=${from}&to=${to}`);
      expect(res.status, res.text).toBe(200);
      return res.body.data.map((o: { occurrence_date: string }) => o.occurrence_date);
    };
    // 2026-03-10 is a Tuesday, the second of its month.
    expect(await dates({ occurrence: 'weekly' }, '2026-03-01', '2026-03-31')).toEqual(['2026-03-10', '2026-03-17', '2026-03-24', '2026-03-31']);
    expect(await dates({ occurrence: 'monthly', recurring_month_option: 'week_day' }, '2026-03-01', '2026-06-30')).toEqual([
      '2026-03-10', '2026-04-14', '2026-05-12', '2026-06-09',
    ]);
    expect(await dates({ occurrence: 'monthly' }, '2026-03-01', '2026-05-31')).toEqual(['2026-03-10', '2026-04-10', '2026-05-10']);
  });

  it('starts at recurring_start, not at schedule', async () => {
    const s = await createSession(t.alice, {
      name: 'later-start', schedule: '2026-05-01', recurring_start: '2026-05-04', recurring_ends: '2026-05-06', is_recurring: 1, occurrence: 'daily',
    });
    const dates = (await t.alice.get(`/api/v1/sessions/${s.id}/occurrences?from=2026-04-01&to=2026-06-01`)).body.data.map((o: { occurrence_date: string }) => o.occurrence_date);
    expect(dates).toEqual(['2026-05-04', '2026-05-05', '2026-05-06']);
    expect(items((await t.alice.get('/api/v1/sessions?keyword=later-start&day_start=2026-05-01&day_ends=2026-05-31')).body.data)).toEqual([
      'later-start@2026-05-04', 'later-start@2026-05-05', 'later-start@2026-05-06',
    ]);
  });

  it('validates the occurrences range and hides invisible series', async () => {
    const s = await createSession(t.alice, { name: 'occ-range', is_recurring: 1, occurrence: 'daily' });
    expect(errorPaths(await t.alice.get(`/api/v1/sessions/${s.id}/occurrences?from=2026-03-10`))).toEqual(['/to']);
    expect(errorPaths(await t.alice.get(`/api/v1/sessions/${s.id}/occurrences?from=2026-03-10&to=2026-03-09`))).toEqual(['/to']);
    expect(errorPaths(await t.alice.get(`/api/v1/sessions/${s.id}/occurrences?from=2026-01-01&to=2027-01-02`))).toEqual(['/to']);
    expect(errorPaths(await t.alice.get(`/api/v1/sessions/${s.id}/occurrences?from=2026-02-30&to=2026-03-01`))).toEqual(['/from']);
    expect((await t.alice.get(`/api/v1/sessions/${s.id}/occurrences?from=2026-01-01&to=2027-01-01`)).body.data).toHaveLength(298);
    expect((await t.bob.get(`/api/v1/sessions/${s.id}/occurrences?from=2026-03-10&to=2026-03-11`)).status).toBe(404);
    expect((await t.carol.get(`/api/v1/sessions/${s.id}/occurrences?from=2026-03-10&to=2026-03-11`)).status).toBe(404);
    const oneOff = await createSession(t.alice, { name: 'occ-one-off', schedule: '2026-03-10' });
    expect((await t.alice.get(`/api/v1/sessions/${oneOff.id}/occurrences?from=2026-03-01&to=2026-03-31`)).body.data).toEqual([
      { occurrence_date: '2026-03-10', starts_at: '2026-03-10T09:00:00.000Z', ends_at: '2026-03-10T10:00:00.000Z', phase: 'ended' },
    ]);
    expect((await t.alice.get(`/api/v1/sessions/${oneOff.id}/occurrences?from=2026-03-11&to=2026-03-31`)).body.data).toEqual([]);
  });

  it('reads a one-off session on its own day as a dated listing shows it, with its occurrence_date', async () => {
    const oneOff = await createSession(t.alice, { name: 'one-off-dated', schedule: '2026-03-12' });
    const listed = (await t.alice.get('/api/v1/sessions?keyword=one-off-dated&date=2026-03-12')).body.data;
    const read = await t.alice.get(`/api/v1/sessions/${oneOff.id}?date=2026-03-12`);
    expect(read.status).toBe(200);
    expect(read.body.data).toMatchObject({ occurrence_date: '2026-03-12', starts_at: '2026-03-12T09:00:00.000Z', ends_at: '2026-03-12T10:00:00.000Z', phase: 'ended' });
    expect(listed).toEqual([{ ...read.body.data, participation: listed[0].participation }]);
    expect((await t.alice.get(`/api/v1/sessions/${oneOff.id}`)).body.data).not.toHaveProperty('occurrence_date');
    expect((await t.alice.get(`/api/v1/sessions/${oneOff.id}?date=2026-03-13`)).status).toBe(404);
  });

  it('deletes one occurrence: it disappears; a date that is no occurrence is 404', async () => {
    const s = await createSession(t.alice, { name: 'del-occ', is_public: true, schedule: '2026-06-01', recurring_ends: '2026-06-05', is_recurring: 1, occurrence: 'daily' });
    expect((await t.bob.delete(`/api/v1/sessions/${s.id}?scope=occurrence&date=2026-06-03`)).status).toBe(403);
    expect((await t.alice.delete(`/api/v1/sessions/${s.id}?scope=occurrence&date=2026-06-03`)).status).toBe(204);
    expect((await t.alice.delete(`/api/v1/sessions/${s.id}?scope=occurrence&date=2026-06-03`)).status).toBe(404);
    expect((await t.alice.delete(`/api/v1/sessions/${s.id}?scope=occurrence&date=2026-06-06`)).status).toBe(404);
    expect((await t.alice.delete(`/api/v1/sessions/${s.id}?scope=occurrence&date=2026-05-31`)).status).toBe(404);
    expect(errorPaths(await t.alice.delete(`/api/v1/sessions/${s.id}?scope=occurrence&date=2026-06-31`))).toEqual(['/date']);
    expect(items((await t.bob.get('/api/v1/sessions?keyword=del-occ&day_start=2026-06-01&day_ends=2026-06-30')).body.data)).toEqual([
      'del-occ@2026-06-01', 'del-occ@2026-06-02', 'del-occ@2026-06-04', 'del-occ@2026-06-05',
    ]);
    expect((await t.bob.get('/api/v1/sessions?keyword=del-occ&date=2026-06-03')).body.data).toEqual([]);
    const record = (await t.alice.get(`/api/v1/sessions/${s.id}?date=2026-06-02`)).body.data;
    expect(record.rrule).toContain('EXDATE');
    expect((await t.alice.get(`/api/v1/sessions/${s.id}?date=2026-06-03`)).status).toBe(404);
    expect((await t.alice.post(`/api/v1/sessions/${s.id}/join?date=2026-06-03`)).status).toBe(404);
  });

  it('deletes the next occurrence on or after today by default', async () => {
    const today = utcToday();
    const s = await createSession(t.alice, { name: 'del-today', schedule: addDays(today, -3), is_recurring: 1, occurrence: 'daily' });
    expect((await t.alice.delete(`/api/v1/sessions/${s.id}?scope=occurrence`)).status).toBe(204);
    const dates = (await t.alice.get(`/api/v1/sessions/${s.id}/occurrences?from=${addDays(today, -1)}&to=${addDays(today, 1)}`)).body.data.map(
      (o: { occurrence_date: string }) => o.occurrence_date,
    );
    expect(dates).toEqual([addDays(today, -1), addDays(today, 1)]);
    expect((await t.alice.delete(`/api/v1/sessions/${s.id}?scope=occurrence`)).status).toBe(204);
    expect((await t.alice.get(`/api/v1/sessions/${s.id}/occurrences?from=${today}&to=${addDays(today, 2)}`)).body.data.map((o: { occurrence_date: string }) => o.occurrence_date)).toEqual([
      addDays(today, 2),
    ]);
    const ended = await createSession(t.alice, { name: 'ended', schedule: '2020-01-01', recurring_ends: '2020-01-31', is_recurring: 1, occurrence: 'daily' });
    expect((await t.alice.delete(`/api/v1/sessions/${ended.id}?scope=occurrence`)).status).toBe(404);
  });

  it('deletes this and the following occurrences by ending the series before the date', async () => {
    const s = await createSession(t.alice, { name: 'del-following', schedule: '2026-08-03', is_recurring: 1, occurrence: 'weekly', recurring_days: [1, 4] });
    expect((await t.alice.delete(`/api/v1/sessions/${s.id}?scope=following&date=2026-08-13`)).status).toBe(204);
    const after = (await t.alice.get(`/api/v1/sessions/${s.id}`)).body.data;
    expect(after.recurring_ends).toBe('2026-08-10');
    expect(items((await t.alice.get('/api/v1/sessions?keyword=del-following&day_start=2026-08-01&day_ends=2026-09-30')).body.data)).toEqual([
      'del-following@2026-08-03', 'del-following@2026-08-06', 'del-following@2026-08-10',
    ]);
    expect((await t.alice.delete(`/api/v1/sessions/${s.id}?scope=following&date=2026-08-11`)).status).toBe(404);
    // From the very first occurrence: nothing is left, so the series is gone.
    expect((await t.alice.delete(`/api/v1/sessions/${s.id}?scope=following&date=2026-08-03`)).status).toBe(204);
    expect((await t.alice.get(`/api/v1/sessions/${s.id}`)).status).toBe(404);
  });

  it('refuses a series without any occurrence at recurring_ends, storing nothing', async () => {
    // 2026-03-10 is a Tuesday; the last Monday of March 2026 is the 30th.
    for (const [name, fields] of [
      ['empty-weekly', { schedule: '2026-03-10', recurring_start: '2026-03-10', recurring_ends: '2026-03-11', occurrence: 'weekly', recurring_days: [1] }],
      ['empty-monthly', {
        schedule: '2026-03-02', recurring_ends: '2026-03-20', occurrence: 'monthly', recurring_month_option: 'week_day', recurring_month_week_pos: -1, recurring_month_week_day: 1,
      }],
      ['empty-later-start', { schedule: '2026-03-09', recurring_start: '2026-03-10', recurring_ends: '2026-03-15', occurrence: 'weekly', recurring_days: [1] }],
    ] as const) {
      const res = await t.alice.post('/api/v1/sessions', sessionBody({ name, is_recurring: 1, ...fields }));
      expect(errorPaths(res)).toEqual(['/recurring_ends']);
      expect(res.body.errors[0].message).toMatch(/^the series has no occurrence between its start \(2026-03-\d\d\) and recurring_ends \(2026-03-\d\d\)$/);
      expect((await t.alice.get(`/api/v1/sessions?keyword=${name}`)).body.data).toEqual([]);
    }
    // One occurrence is enough: a range that ends on the Monday; a monthly `exact` series always has its start.
    expect((await createSession(t.alice, { is_recurring: 1, schedule: '2026-03-10', recurring_ends: '2026-03-16', occurrence: 'weekly', recurring_days: [1] })).starts_at).toBe(
      '2026-03-16T09:00:00.000Z',
    );
    expect((await createSession(t.alice, { is_recurring: 1, schedule: '2026-02-01', recurring_ends: '2026-02-28', occurrence: 'monthly', recurring_month_option: 'exact' })).starts_at).toBe(
      '2026-02-01T09:00:00.000Z',
    );
    // Listed with the other field errors in one 422.
    const both = await t.alice.post('/api/v1/sessions', sessionBody({ duration: 0, is_recurring: 1, recurring_ends: '2026-03-11', occurrence: 'weekly', recurring_days: [1] }));
    expect(errorPaths(both)).toEqual(['/duration', '/recurring_ends']);
  });

  it('refuses an update that leaves a series without any occurrence, changing nothing', async () => {
    const weekly = await createSession(t.alice, { name: 'put-empty', schedule: '2026-03-10', is_recurring: 1, occurrence: 'weekly', recurring_days: [1] });
    const stored = (await t.alice.get(`/api/v1/sessions/${weekly.id}`)).body.data;
    expect(errorPaths(await t.alice.put(`/api/v1/sessions/${weekly.id}`, { recurring_ends: '2026-03-15' }))).toEqual(['/recurring_ends']);
    expect(errorPaths(await t.alice.put(`/api/v1/sessions/${weekly.id}`, { recurring_ends: '2026-03-15', timezone: 'Mars/Base' }))).toEqual(['/recurring_ends', '/timezone']);
    expect((await t.alice.get(`/api/v1/sessions/${weekly.id}`)).body.data).toEqual(stored);

    // Removed occurrences count as gone: a range left with only those is empty too.
    const daily = await createSession(t.alice, { name: 'put-removed', schedule: '2026-06-01', recurring_ends: '2026-06-05', is_recurring: 1, occurrence: 'daily' });
    for (const date of ['2026-06-04', '2026-06-05']) expect((await t.alice.delete(`/api/v1/sessions/${daily.id}?scope=occurrence&date=${date}`)).status).toBe(204);
    const before = (await t.alice.get(`/api/v1/sessions/${daily.id}`)).body.data;
    const res = await t.alice.put(`/api/v1/sessions/${daily.id}`, { recurring_start: '2026-06-04' });
    expect(errorPaths(res)).toEqual(['/recurring_ends']);
    expect(res.body.errors[0].message).toBe('every occurrence of the series between its start (2026-06-04) and recurring_ends (2026-06-05) is a removed occurrence');
    expect((await t.alice.get(`/api/v1/sessions/${daily.id}`)).body.data).toEqual(before);
    expect((await t.alice.put(`/api/v1/sessions/${daily.id}`, { recurring_start: '2026-06-03' })).status).toBe(200);
  });

  it('deletes the whole series with its last remaining occurrence, keeping its tasks', async () => {
    const s = await createSession(t.alice, { name: 'del-last', is_public: true, schedule: '2026-07-01', recurring_ends: '2026-07-03', is_recurring: 1, occurrence: 'daily' });
    const task = await t.bob.post('/api/v1/tasks', { context: 'outlive it', session_id: s.id });
    expect(task.status, task.text).toBe(201);
    const dates = async () => (await t.alice.get(`/api/v1/sessions/${s.id}/occurrences?from=2026-07-01&to=2026-07-31`)).body.data.map((o: { occurrence_date: string }) => o.occurrence_date);
    // Not the last one: the series stays, without it.
    expect((await t.alice.delete(`/api/v1/sessions/${s.id}?scope=occurrence&date=2026-07-01`)).status).toBe(204);
    expect((await t.alice.delete(`/api/v1/sessions/${s.id}?scope=occurrence&date=2026-07-03`)).status).toBe(204);
    expect(await dates()).toEqual(['2026-07-02']);
    expect((await t.alice.get(`/api/v1/sessions/${s.id}`)).body.data).toMatchObject({ starts_at: '2026-07-02T09:00:00.000Z', recurring_ends: '2026-07-03' });
    expect((await t.bob.get(`/api/v1/tasks/${task.body.data.id}`)).body.data.session_id).toBe(s.id);
    // The last one, in the middle of the range: nothing would be left, so the session goes.
    expect((await t.alice.delete(`/api/v1/sessions/${s.id}?scope=occurrence&date=2026-07-02`)).status).toBe(204);
    expect((await t.alice.get(`/api/v1/sessions/${s.id}`)).status).toBe(404);
    expect((await t.alice.get('/api/v1/sessions?keyword=del-last')).body.data).toEqual([]);
    expect((await t.bob.get(`/api/v1/tasks/${task.body.data.id}`)).body.data).toMatchObject({ context: 'outlive it', session_id: null });
  });

  it('deletes a whole series by default, keeping its tasks', async () => {
    const s = await createSession(t.alice, { name: 'del-series', is_public: true, is_recurring: 1, occurrence: 'daily' });
    const task = await t.bob.post('/api/v1/tasks', { context: 'keep me', session_id: s.id });
    expect(task.status, task.text).toBe(201);
    expect((await t.bob.post(`/api/v1/sessions/${s.id}/join?date=2026-03-12`)).status).toBe(200);
    expect((await t.alice.delete(`/api/v1/sessions/${s.id}`)).status).toBe(204);
    expect((await t.alice.get(`/api/v1/sessions/${s.id}`)).status).toBe(404);
    expect((await t.alice.get(`/api/v1/sessions?keyword=del-series&date=2026-03-12`)).body.data).toEqual([]);
    expect((await t.bob.get(`/api/v1/tasks/${task.body.data.id}`)).body.data).toMatchObject({ context: 'keep me', session_id: null });
  });

  it('gives each listed occurrence its own status and filters completed per occurrence', async () => {
    const s = await createSession(t.alice, { name: 'per-occ', schedule: '2026-09-01', recurring_ends: '2026-09-03', is_recurring: 1, occurrence: 'daily' });
    expect((await t.alice.post(`/api/v1/sessions/${s.id}/complete?date=2026-09-02`)).status).toBe(200);
    const q = 'keyword=per-occ&day_start=2026-09-01&day_ends=2026-09-30';
    const list = (await t.alice.get(`/api/v1/sessions?${q}`)).body.data as SessionRecord[];
    expect(list.map((x) => x.status)).toEqual(['waiting', 'completed', 'waiting']);
    expect(items((await t.alice.get(`/api/v1/sessions?${q}&completed=1`)).body.data)).toEqual(['per-occ@2026-09-02']);
    expect(items((await t.alice.get(`/api/v1/sessions?${q}&completed=0`)).body.data)).toEqual(['per-occ@2026-09-01', 'per-occ@2026-09-03']);
    // The series itself is not completed.
    expect((await t.alice.get(`/api/v1/sessions/${s.id}?date=2026-09-01`)).body.data.status).toBe('waiting');
    expect((await t.alice.get(`/api/v1/sessions/${s.id}?date=2026-09-02`)).body.data.status).toBe('completed');
  });

  it('keeps a series intact when its whole record is sent back while an occurrence is completed', async () => {
    const today = utcToday();
    // Today's occurrence starts at UTC midnight: it has started whenever the test runs.
    const s = await createSession(t.alice, { name: 'echo-series', schedule: today, time: '00:00', timezone: 'UTC', is_recurring: 1, occurrence: 'daily' });
    expect((await t.alice.post(`/api/v1/sessions/${s.id}/complete`)).status).toBe(200);
    // Without ?date the record is the series: its own status, and the user's participation in the next occurrence.
    const read = (await t.alice.get(`/api/v1/sessions/${s.id}`)).body.data;
    expect(read.status).toBe('waiting');
    expect(read).not.toHaveProperty('occurrence_date');
    expect(read.participation.completed_at).not.toBeNull();
    const res = await t.alice.put(`/api/v1/sessions/${s.id}`, read);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.updated_at).toBe(read.updated_at);
    expect((await t.alice.get(`/api/v1/sessions/${s.id}?date=${today}`)).body.data.status).toBe('completed');
    expect((await t.alice.get(`/api/v1/sessions/${s.id}?date=${addDays(today, 1)}`)).body.data.status).toBe('waiting');
  });
});
