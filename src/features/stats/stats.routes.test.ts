import { expect, it } from 'vitest';
import { type Client, describeEachDialect, errorPaths, useTestApp } from '../../../test/helpers/harness.js';
import { addDays } from '../recurrence/recurrence.dates.js';
import { createSession } from '../sessions/sessions.test-helpers.js';

const STATS = '/api/v1/me/stats';
const utcToday = () => new Date().toISOString().slice(0, 10);

interface Counts {
  focused_minutes: number;
  sessions_completed: number;
  sessions_joined: number;
  tasks_completed: number;
  active_members?: number;
}
type Bucket = Counts & { start: string };
interface Stats {
  buckets: Bucket[];
  totals: Counts;
  current_streak_days?: number;
  longest_streak_days?: number;
}

async function stats(client: Client, query = '', path = STATS): Promise<Stats> {
  const res = await client.get<{ data: Stats }>(`${path}${query === '' ? '' : `?${query}`}`);
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

const zero = { focused_minutes: 0, sessions_completed: 0, sessions_joined: 0, tasks_completed: 0 };

describeEachDialect('focus statistics over HTTP', (dialect) => {
  const t = useTestApp(dialect, { alice: [1], bob: [1], carol: [2], dan: [1] });

  it('defaults to the 28 local days ending today, by day, zeros included, and no streak', async () => {
    const today = utcToday();
    const s = await stats(t.dan);
    expect(s.buckets).toHaveLength(28);
    expect(s.buckets[0]).toEqual({ start: addDays(today, -27), ...zero });
    expect(s.buckets.at(-1)?.start).toBe(today);
    expect(s).toMatchObject({ totals: zero, current_streak_days: 0, longest_streak_days: 0 });
    expect((await t.anonymous.get(STATS)).status).toBe(401);
  });

  it('refuses a range over 366 days or backwards (422 problem+json) and accepts 366 days', async () => {
    const long = await t.dan.get(`${STATS}?from=2025-01-01&to=2026-01-02`);
    expect(long.status).toBe(422);
    expect(long.headers['content-type']).toContain('application/problem+json');
    expect(errorPaths(long)).toEqual(['/to']);
    const backwards = await t.dan.get(`${STATS}?from=2026-03-02&to=2026-03-01`);
    expect(backwards.status).toBe(422);
    expect((await stats(t.dan, 'from=2025-01-01&to=2026-01-01')).buckets).toHaveLength(366);
    expect((await t.dan.get(`${STATS}?group=year`)).status).toBe(422);
    expect((await t.dan.get(`/api/v1/orgs/1/stats?from=2026-03-02&to=2026-03-01`)).status).toBe(422);
  });

  it('groups by weeks from Monday and by calendar months, the periods the range touches', async () => {
    const weeks = await stats(t.dan, 'from=2026-11-01&to=2026-11-30&group=week');
    expect(weeks.buckets.map((b) => b.start)).toEqual(['2026-10-26', '2026-11-02', '2026-11-09', '2026-11-16', '2026-11-23', '2026-11-30']);
    const months = await stats(t.dan, 'from=2025-12-31&to=2026-03-01&group=month');
    expect(months.buckets.map((b) => b.start)).toEqual(['2025-12-01', '2026-01-01', '2026-02-01', '2026-03-01']);
  });

  it('counts joins, completions, minutes and tasks, and a streak that reached yesterday', async () => {
    const today = utcToday();
    const first = addDays(today, -4);
    const series = await createSession(t.alice, { name: 'daily', is_public: true, schedule: first, time: '12:05 AM', timezone: 'UTC', duration: 25, is_recurring: 1, occurrence: 'daily' });
    // Bob first: an occurrence its host completed can no longer be joined.
    expect((await t.bob.post(`/api/v1/sessions/${series.id}/join?date=${addDays(today, -2)}`)).status).toBe(200);
    expect((await t.bob.post(`/api/v1/sessions/${series.id}/complete?date=${addDays(today, -2)}`)).status).toBe(200);
    expect((await t.bob.post(`/api/v1/sessions/${series.id}/join?date=${addDays(today, -1)}`)).status).toBe(200);
    for (let d = 0; d < 4; d++) {
      const res = await t.alice.post(`/api/v1/sessions/${series.id}/complete?date=${addDays(first, d)}`);
      expect(res.status, res.text).toBe(200);
    }

    const alice = await stats(t.alice, `from=${first}&to=${today}`);
    expect(alice.totals).toEqual({ focused_minutes: 100, sessions_completed: 4, sessions_joined: 4, tasks_completed: 0 });
    expect(alice.buckets.map((b) => b.sessions_completed)).toEqual([1, 1, 1, 1, 0]);
    expect([alice.current_streak_days, alice.longest_streak_days]).toEqual([4, 4]);
    const bob = await stats(t.bob, `from=${first}&to=${today}`);
    expect(bob.totals).toEqual({ focused_minutes: 25, sessions_completed: 1, sessions_joined: 2, tasks_completed: 0 });
    expect([bob.current_streak_days, bob.longest_streak_days]).toEqual([0, 1]);

    const org = await stats(t.alice, `from=${first}&to=${today}`, '/api/v1/orgs/1/stats');
    expect(org.totals).toEqual({ focused_minutes: 125, sessions_completed: 5, sessions_joined: 6, tasks_completed: 0, active_members: 2 });
    expect(org.buckets.map((b) => b.active_members)).toEqual([1, 1, 2, 2, 0]);
    expect(org).not.toHaveProperty('current_streak_days');
    expect((await t.carol.get('/api/v1/orgs/1/stats')).status).toBe(404);
    expect((await t.alice.get('/api/v1/orgs/999/stats')).status).toBe(404);
    expect((await stats(t.carol, '', '/api/v1/orgs/2/stats')).totals).toEqual({ ...zero, active_members: 0 });
  });

  it('counts a task when it is completed; a no-op write keeps the instant, reopening clears it', async () => {
    const s = await createSession(t.dan, { name: 'for tasks' });
    const created = await t.dan.post<{ data: { id: string; updated_at: string } }>('/api/v1/tasks', { context: 'write', session_id: s.id, is_completed: true });
    expect(created.status, created.text).toBe(201);
    const id = created.body.data.id;
    expect((await stats(t.dan)).totals.tasks_completed).toBe(1);
    const same = await t.dan.put<{ data: { updated_at: string } }>(`/api/v1/tasks/${id}`, { is_completed: true });
    expect(same.body.data.updated_at).toBe(created.body.data.updated_at);
    expect((await t.dan.put(`/api/v1/tasks/${id}`, { is_completed: false })).status).toBe(200);
    expect((await stats(t.dan)).totals.tasks_completed).toBe(0);
    expect((await t.dan.put(`/api/v1/tasks/${id}`, { is_completed: true })).status).toBe(200);
    expect((await stats(t.dan)).buckets.at(-1)?.tasks_completed).toBe(1);
  });

  it('counts an edited occurrence where and when it took place, with its own length, in buckets and streaks', async () => {
    const series = await createSession(t.carol, { org_id: 2, name: 'edited', schedule: '2026-01-05', time: '10:00', timezone: 'UTC', duration: 30, is_recurring: 1, occurrence: 'daily', recurring_ends: '2026-01-20' });
    const edit = async (date: string, body: object) => expect((await t.carol.put(`/api/v1/sessions/${series.id}?date=${date}`, body)).status).toBe(200);
    await edit('2026-01-07', { time: '15:00', duration: 50 });
    await edit('2026-01-20', { schedule: '2026-01-08' });
    await edit('2026-01-06', { schedule: '2026-02-15' });
    for (const date of ['2026-01-05', '2026-01-06', '2026-01-07', '2026-01-20']) {
      const res = await t.carol.post(`/api/v1/sessions/${series.id}/complete?date=${date}`);
      expect(res.status, res.text).toBe(200);
    }
    const january = await stats(t.carol, 'from=2026-01-01&to=2026-01-10');
    expect(january.buckets.filter((b) => b.sessions_completed > 0).map((b) => [b.start, b.focused_minutes])).toEqual([
      ['2026-01-05', 30],
      ['2026-01-07', 50],
      ['2026-01-08', 30],
    ]);
    expect(january.totals).toEqual({ focused_minutes: 110, sessions_completed: 3, sessions_joined: 3, tasks_completed: 0 });
    expect((await stats(t.carol, 'from=2026-01-01&to=2026-01-10', '/api/v1/orgs/2/stats')).totals).toMatchObject({ focused_minutes: 110, active_members: 1 });
    expect((await stats(t.carol, 'from=2026-02-01&to=2026-02-28&group=month')).buckets).toEqual([{ start: '2026-02-01', ...zero, focused_minutes: 30, sessions_completed: 1, sessions_joined: 1 }]);
    // Completed days 5, 7, 8 January and 15 February: the longest run is two days (by series dates it would be three).
    expect((await stats(t.carol)).longest_streak_days).toBe(2);
  });

  it('buckets by the local start day in the home zone, not the session’s zone', async () => {
    // Monday 00:30 in Tokyo is Sunday 15:30 UTC: a different week for a UTC reader than for a Tokyo one.
    const s = await createSession(t.carol, { org_id: 2, name: 'tokyo', schedule: '2026-11-23', time: '12:30 AM', timezone: 'Asia/Tokyo', duration: 30 });
    expect((await t.carol.post(`/api/v1/sessions/${s.id}/complete`)).status).toBe(200);
    const query = 'from=2026-11-16&to=2026-11-29&group=week';
    expect((await stats(t.carol, query)).buckets.map((b) => b.focused_minutes)).toEqual([30, 0]);
    expect((await t.carol.put('/api/v1/me', { timezone: 'Asia/Tokyo' })).status).toBe(200);
    expect((await stats(t.carol, query)).buckets.map((b) => b.focused_minutes)).toEqual([0, 30]);
  });
});
