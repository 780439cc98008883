import { expect, it } from 'vitest';
import { describeEachDialect, useTestApp } from '../../../test/helpers/harness.js';
import { createSession } from './sessions.test-helpers.js';

/*
 * Contract section 10, rows `phase` and "Completing": every record and occurrence tells by
 * the server's clock whether it is upcoming, running or ended; an occurrence can be
 * completed once it has started, never before.
 */

const addDays = (date: string, n: number) => new Date(Date.parse(`${date}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

/** The UTC date and 24-hour `HH:mm` of `minutes` from now: a session in UTC starting then. */
function startingIn(minutes: number): { schedule: string; time: string; timezone: 'UTC' } {
  const at = new Date(Date.now() + minutes * 60_000).toISOString();
  return { schedule: at.slice(0, 10), time: at.slice(11, 16), timezone: 'UTC' };
}

describeEachDialect('session phase and completing over HTTP', (dialect) => {
  const t = useTestApp(dialect, { alice: [1], bob: [1] });

  it('gives a one-off session upcoming, running or ended, in its record, a listing and /occurrences', async () => {
    const ended = await createSession(t.alice, { is_public: true, name: 'phase-one-off', timezone: 'UTC' });
    const running = await createSession(t.alice, { is_public: true, name: 'phase-one-off', ...startingIn(-10) });
    const upcoming = await createSession(t.alice, { is_public: true, name: 'phase-one-off', ...startingIn(2 * 24 * 60) });
    expect([ended.phase, running.phase, upcoming.phase]).toEqual(['ended', 'running', 'upcoming']);
    for (const s of [ended, running, upcoming]) {
      expect((await t.bob.get(`/api/v1/sessions/${s.id}`)).body.data.phase).toBe(s.phase);
      expect((await t.bob.get(`/api/v1/sessions/${s.id}?date=${s.schedule}`)).body.data.phase).toBe(s.phase);
      const occurrences = (await t.bob.get(`/api/v1/sessions/${s.id}/occurrences?from=${s.schedule}&to=${s.schedule}`)).body.data;
      expect(occurrences).toEqual([expect.objectContaining({ occurrence_date: s.schedule, phase: s.phase })]);
    }
    const listed = (await t.bob.get('/api/v1/sessions?keyword=phase-one-off&limit=10')).body.data as { id: number; phase: string }[];
    expect(new Map(listed.map((s) => [s.id, s.phase]))).toEqual(new Map([ended, running, upcoming].map((s) => [s.id, s.phase])));
    // `status` stays what people set.
    expect([ended.status, running.status, upcoming.status]).toEqual(['waiting', 'waiting', 'waiting']);
  });

  it('gives each occurrence of a series its own phase, and the series as a whole its next one’s', async () => {
    const at = startingIn(-10);
    const first = addDays(at.schedule, -3);
    const series = await createSession(t.alice, { is_public: true, name: 'phase-series', ...at, schedule: first, is_recurring: 1, occurrence: 'daily' });
    expect(series.phase).toBe('running');
    const day = async (date: string) => (await t.bob.get(`/api/v1/sessions/${series.id}?date=${date}`)).body.data.phase;
    expect([await day(addDays(at.schedule, -1)), await day(at.schedule), await day(addDays(at.schedule, 1))]).toEqual(['ended', 'running', 'upcoming']);
    const occurrences = (await t.bob.get(`/api/v1/sessions/${series.id}/occurrences?from=${first}&to=${addDays(at.schedule, 2)}`)).body.data;
    expect(occurrences.map((o: { phase: string }) => o.phase)).toEqual(['ended', 'ended', 'ended', 'running', 'upcoming', 'upcoming']);
    const dated = (await t.bob.get(`/api/v1/sessions?keyword=phase-series&day_start=${addDays(at.schedule, -1)}&day_ends=${addDays(at.schedule, 1)}`)).body.data;
    expect(dated.map((o: { phase: string }) => o.phase)).toEqual(['ended', 'running', 'upcoming']);

    // Today's occurrence over: the next one is upcoming.
    const over = await createSession(t.alice, { is_public: true, name: 'phase-series-over', ...startingIn(-180), schedule: first, is_recurring: 1, occurrence: 'daily' });
    expect((await t.bob.get(`/api/v1/sessions/${over.id}`)).body.data.phase).toBe('upcoming');
    // No occurrence left.
    const gone = await createSession(t.alice, { is_public: true, name: 'phase-series-gone', schedule: '2026-03-01', recurring_ends: '2026-03-10', is_recurring: 1, occurrence: 'daily' });
    expect(gone.phase).toBe('ended');
    expect((await t.bob.get(`/api/v1/sessions/${gone.id}`)).body.data.phase).toBe('ended');
  });

  it('tells a whole series’ phase from its next occurrence where an override moved it', async () => {
    // The series' own time six hours off: none of its days runs now.
    const own = startingIn(6 * 60);
    const now = startingIn(-1);
    const series = await createSession(t.alice, { is_public: true, name: 'phase-moved', timezone: 'UTC', time: own.time, duration: 30, schedule: addDays(now.schedule, -2), is_recurring: 1, occurrence: 'daily' });
    const whole = async () => (await t.bob.get(`/api/v1/sessions/${series.id}`)).body.data.phase;
    const listed = async () => ((await t.bob.get('/api/v1/sessions?keyword=phase-moved')).body.data as { phase: string }[]).map((s) => s.phase);
    expect(await whole()).toBe('upcoming');
    // Today's occurrence moved to a minute ago: the series runs now, as a whole and in an undated listing.
    const edited = await t.alice.put(`/api/v1/sessions/${series.id}?date=${now.schedule}`, { time: now.time });
    expect(edited.status, edited.text).toBe(200);
    expect(edited.body.data.phase).toBe('running');
    expect(await whole()).toBe('running');
    expect(await listed()).toEqual(['running']);
  });

  it('ignores a phase sent in a body', async () => {
    const s = await createSession(t.alice, { name: 'phase-sent', phase: 'running' });
    expect(s.phase).toBe('ended');
    const changed = await t.alice.put(`/api/v1/sessions/${s.id}`, { phase: 'upcoming', name: 'phase-sent-2' });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.data.phase).toBe('ended');
  });

  it('refuses to complete an occurrence before it starts (409 not-started), and completes one running or ended', async () => {
    const later = await createSession(t.alice, { is_public: true, name: 'phase-later', ...startingIn(60) });
    expect((await t.bob.post(`/api/v1/sessions/${later.id}/join`)).status).toBe(200);
    for (const who of [t.alice, t.bob]) {
      const refused = await who.post(`/api/v1/sessions/${later.id}/complete`);
      expect(refused.status, refused.text).toBe(409);
      expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(refused.body.type).toMatch(/\/problems\/not-started$/);
      expect(refused.body.detail).toContain(later.starts_at);
    }
    expect((await t.alice.get(`/api/v1/sessions/${later.id}`)).body.data).toMatchObject({ status: 'waiting', participation: { completed_at: null } });

    const at = startingIn(-10);
    const series = await createSession(t.alice, { is_public: true, name: 'phase-done', ...at, schedule: addDays(at.schedule, -3), is_recurring: 1, occurrence: 'daily' });
    const tomorrow = addDays(at.schedule, 1);
    const yesterday = addDays(at.schedule, -1);
    expect((await t.bob.post(`/api/v1/sessions/${series.id}/join?date=${tomorrow}`)).status).toBe(200);
    expect((await t.bob.post(`/api/v1/sessions/${series.id}/complete?date=${tomorrow}`)).body.type).toMatch(/\/problems\/not-started$/);
    expect((await t.alice.post(`/api/v1/sessions/${series.id}/complete?date=${tomorrow}`)).status).toBe(409);
    // Joined and completed after it ended, or while it runs.
    for (const date of [yesterday, at.schedule]) {
      expect((await t.bob.post(`/api/v1/sessions/${series.id}/join?date=${date}`)).status).toBe(200);
      const done = await t.bob.post(`/api/v1/sessions/${series.id}/complete?date=${date}`);
      expect(done.status, done.text).toBe(200);
      expect(done.body.data.participation.completed_at).not.toBeNull();
    }
    const ended = await createSession(t.alice, { name: 'phase-ended', timezone: 'UTC' });
    const host = await t.alice.post(`/api/v1/sessions/${ended.id}/complete`);
    expect(host.status, host.text).toBe(200);
    expect(host.body.data.status).toBe('completed');
    expect((await t.alice.get(`/api/v1/sessions/${ended.id}`)).body.data).toMatchObject({ status: 'completed', phase: 'ended' });
  });
});
