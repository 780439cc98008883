import { expect, it } from 'vitest';
import { type Client, describeEachDialect, errorPaths, useTestApp } from '../../../test/helpers/harness.js';
import { createSession } from './sessions.test-helpers.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const utcToday = () => new Date().toISOString().slice(0, 10);
const addDays = (date: string, n: number) => new Date(Date.parse(`${date}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

describeEachDialect('session participation over HTTP', (dialect) => {
  const t = useTestApp(dialect, { alice: [1], bob: [1], carol: [2], erin: [1] });

  it('joins idempotently, counts the host plus joiners, and leaves', async () => {
    const s = await createSession(t.alice, { is_public: true });
    const before = (await t.bob.get(`/api/v1/sessions/${s.id}`)).body.data;
    expect(before.participation).toEqual({ joined: false, role: null, joined_at: null, completed_at: null });
    expect(before.participants_count).toBe(1);

    const first = await t.bob.post(`/api/v1/sessions/${s.id}/join`);
    expect(first.status, first.text).toBe(200);
    expect(first.body.data).toMatchObject({ session_id: s.id, occurrence_date: null, status: 'waiting', participation: { joined: true, role: 'participant', completed_at: null } });
    expect(first.body.data.participation.joined_at).toMatch(ISO);
    const again = await t.bob.post(`/api/v1/sessions/${s.id}/join`);
    expect(again.status).toBe(200);
    expect(again.body.data.participation.joined_at).toBe(first.body.data.participation.joined_at);

    const read = (await t.bob.get(`/api/v1/sessions/${s.id}`)).body.data;
    expect(read.participation).toMatchObject({ joined: true, role: 'participant' });
    expect(read.participants_count).toBe(2);
    expect((await t.alice.post(`/api/v1/sessions/${s.id}/join`)).body.data.participation).toMatchObject({ joined: true, role: 'host' });
    expect((await t.erin.post(`/api/v1/sessions/${s.id}/join`)).status).toBe(200);
    expect((await t.alice.get(`/api/v1/sessions/${s.id}`)).body.data.participants_count).toBe(3);

    const left = await t.bob.post(`/api/v1/sessions/${s.id}/leave`);
    expect(left.status, left.text).toBe(200);
    expect(left.body.data.participation).toEqual({ joined: false, role: null, joined_at: null, completed_at: null });
    expect((await t.alice.get(`/api/v1/sessions/${s.id}`)).body.data.participants_count).toBe(2);
    expect((await t.bob.post(`/api/v1/sessions/${s.id}/leave`)).status).toBe(200);
    expect((await t.alice.post(`/api/v1/sessions/${s.id}/leave`)).status).toBe(409);
  });

  it('makes a session the user joined visible to them after it turns private, until they leave', async () => {
    const s = await createSession(t.alice, { is_public: true, name: 'turns-private' });
    expect((await t.bob.post(`/api/v1/sessions/${s.id}/join`)).status).toBe(200);
    expect((await t.alice.put(`/api/v1/sessions/${s.id}`, { is_public: false })).status).toBe(200);
    expect((await t.bob.get(`/api/v1/sessions/${s.id}`)).body.data.participation).toMatchObject({ joined: true, role: 'participant' });
    expect((await t.bob.get('/api/v1/sessions?keyword=turns-private')).body.data).toHaveLength(1);
    expect((await t.bob.get('/api/v1/sessions?keyword=turns-private&source=user')).body.data).toHaveLength(1);
    expect((await t.erin.get(`/api/v1/sessions/${s.id}`)).status).toBe(404);
    expect((await t.erin.post(`/api/v1/sessions/${s.id}/join`)).status).toBe(404);
    const left = await t.bob.post(`/api/v1/sessions/${s.id}/leave`);
    expect(left.status, left.text).toBe(200);
    expect((await t.bob.get(`/api/v1/sessions/${s.id}`)).status).toBe(404);
    expect((await t.bob.get('/api/v1/sessions?keyword=turns-private')).body.data).toHaveLength(0);
  });

  it('forgets joins of occurrences a pattern change removed, so a private session does not stay visible through them', async () => {
    const series = { is_public: true, schedule: '2027-03-01', is_recurring: 1, occurrence: 'daily', recurring_ends: '2027-03-05' };
    const off = await createSession(t.alice, { ...series, name: 'switched off' });
    const moved = await createSession(t.alice, { ...series, name: 'moved days' });
    const kept = await createSession(t.alice, { ...series, name: 'kept day' });
    for (const s of [off, moved, kept]) expect((await t.bob.post(`/api/v1/sessions/${s.id}/join?date=2027-03-03`)).status).toBe(200);
    expect((await t.alice.put(`/api/v1/sessions/${off.id}`, { is_recurring: 0, is_public: false })).status).toBe(200);
    // Weekly on Mondays from 1 March: 3 March (a Wednesday) is no longer a day of it.
    expect((await t.alice.put(`/api/v1/sessions/${moved.id}`, { occurrence: 'weekly', recurring_days: [1], is_public: false })).status).toBe(200);
    expect((await t.alice.put(`/api/v1/sessions/${kept.id}`, { time: '3:00 PM', is_public: false })).status).toBe(200);
    for (const s of [off, moved]) {
      expect((await t.bob.get(`/api/v1/sessions/${s.id}`)).status).toBe(404);
      expect((await t.alice.get(`/api/v1/sessions/${s.id}`)).body.data.participants_count).toBe(1);
    }
    expect((await t.bob.get('/api/v1/sessions?source=user')).body.data.map((s: { name: string }) => s.name)).toEqual(['kept day']);
    const still = await t.bob.get(`/api/v1/sessions/${kept.id}?date=2027-03-03`);
    expect(still.body.data.participation).toMatchObject({ joined: true, role: 'participant' });
  });

  it('gives collaborators the collaborator role', async () => {
    const s = await createSession(t.alice, { collaborator: ['bob'] });
    expect((await t.bob.get(`/api/v1/sessions/${s.id}`)).body.data.participation).toEqual({ joined: false, role: 'collaborator', joined_at: null, completed_at: null });
    const joined = await t.bob.post(`/api/v1/sessions/${s.id}/join`);
    expect(joined.body.data.participation).toMatchObject({ joined: true, role: 'collaborator' });
    expect((await t.alice.get(`/api/v1/sessions/${s.id}`)).body.data.participants_count).toBe(2);
  });

  it('completes only after joining; the host completing finishes a one-off session', async () => {
    const s = await createSession(t.alice, { is_public: true });
    expect((await t.bob.post(`/api/v1/sessions/${s.id}/complete`)).status).toBe(409);
    await t.bob.post(`/api/v1/sessions/${s.id}/join`);
    const done = await t.bob.post(`/api/v1/sessions/${s.id}/complete`);
    expect(done.status, done.text).toBe(200);
    expect(done.body.data.participation.completed_at).toMatch(ISO);
    expect(done.body.data.status).toBe('waiting');
    expect((await t.bob.post(`/api/v1/sessions/${s.id}/complete`)).body.data.participation.completed_at).toBe(done.body.data.participation.completed_at);
    expect((await t.bob.post(`/api/v1/sessions/${s.id}/leave`)).status).toBe(409);
    expect((await t.alice.get(`/api/v1/sessions/${s.id}`)).body.data.status).toBe('waiting');

    const host = await t.alice.post(`/api/v1/sessions/${s.id}/complete`);
    expect(host.status).toBe(200);
    expect(host.body.data).toMatchObject({ status: 'completed', participation: { role: 'host', joined: true } });
    expect(host.body.data.participation.completed_at).toMatch(ISO);
    expect((await t.bob.get(`/api/v1/sessions/${s.id}`)).body.data.status).toBe('completed');
    expect((await t.bob.get('/api/v1/sessions?completed=1')).body.data.map((x: { id: number }) => x.id)).toContain(s.id);
    expect((await t.erin.post(`/api/v1/sessions/${s.id}/join`)).status).toBe(409);
    expect((await t.alice.put(`/api/v1/sessions/${s.id}`, { status: 'waiting' })).status).toBe(409);
  });

  it('keeps the host\'s joined_at at the creation time, also once the host completes', async () => {
    // Today's occurrence starts at UTC midnight: it has started whenever the test runs.
    for (const overrides of [{}, { is_recurring: 1, occurrence: 'daily', schedule: utcToday(), time: '00:00', timezone: 'UTC' }]) {
      const s = await createSession(t.alice, overrides);
      const before = (await t.alice.get(`/api/v1/sessions/${s.id}`)).body.data.participation;
      expect(before).toEqual({ joined: true, role: 'host', joined_at: s.created_at, completed_at: null });
      await new Promise((r) => setTimeout(r, 5));
      const done = await t.alice.post(`/api/v1/sessions/${s.id}/complete`);
      expect(done.status, done.text).toBe(200);
      expect(done.body.data.participation.joined_at).toBe(s.created_at);
      expect(done.body.data.participation.completed_at).not.toBe(s.created_at);
      expect((await t.alice.get(`/api/v1/sessions/${s.id}`)).body.data.participation.joined_at).toBe(s.created_at);
    }
  });

  it('takes an empty body on join, leave and complete whatever its Content-Type', async () => {
    const s = await createSession(t.alice, { is_public: true });
    for (const type of ['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=utf-8']) {
      for (const action of ['join', 'complete']) {
        const res = await t.erin.request('POST', `/api/v1/sessions/${s.id}/${action}`, '', { 'content-type': type });
        expect(res.status, `${action} ${type}: ${res.text}`).toBe(200);
      }
    }
    const left = await t.bob.request('POST', `/api/v1/sessions/${s.id}/leave`, '', { 'content-type': 'application/json' });
    expect(left.status, left.text).toBe(200);
    // A body that is not empty is still read: malformed JSON stays a 400.
    expect((await t.bob.request('POST', `/api/v1/sessions/${s.id}/join`, '{', { 'content-type': 'application/json' })).status).toBe(400);
  });

  it('answers 404 for invisible or other-org sessions and 422 for bad dates', async () => {
    const priv = await createSession(t.alice);
    for (const action of ['join', 'leave', 'complete']) {
      expect((await t.bob.post(`/api/v1/sessions/${priv.id}/${action}`)).status).toBe(404);
      expect((await t.carol.post(`/api/v1/sessions/${priv.id}/${action}`)).status).toBe(404);
      expect((await t.alice.post(`/api/v1/sessions/99999999/${action}`)).status).toBe(404);
    }
    expect(errorPaths(await t.alice.post(`/api/v1/sessions/${priv.id}/join?date=2026-02-30`))).toEqual(['/date']);
    expect((await t.alice.post(`/api/v1/sessions/${priv.id}/join?date=2026-03-11`)).status).toBe(404);
    expect((await t.alice.post(`/api/v1/sessions/${priv.id}/join?date=2026-03-10`)).status).toBe(200);
  });

  it('applies to one occurrence of a series; the next one starts fresh', async () => {
    const today = utcToday();
    const s = await createSession(t.alice, { is_public: true, name: 'series-p', schedule: addDays(today, -2), is_recurring: 1, occurrence: 'daily' });
    // d1 is over (it can still be joined and completed), d2 has not started.
    const d1 = addDays(today, -1);
    const d2 = addDays(today, 1);
    const joined = await t.bob.post(`/api/v1/sessions/${s.id}/join?date=${d1}`);
    expect(joined.status, joined.text).toBe(200);
    expect(joined.body.data).toMatchObject({ occurrence_date: d1, participation: { joined: true, role: 'participant' } });
    // Default occurrence: the next one on or after today.
    const todays = await t.erin.post(`/api/v1/sessions/${s.id}/join`);
    expect(todays.body.data.occurrence_date).toBe(today);

    const at = async (c: Client, date: string) => (await c.get(`/api/v1/sessions/${s.id}?date=${date}`)).body.data;
    expect(await at(t.bob, d1)).toMatchObject({ occurrence_date: d1, participants_count: 2, participation: { joined: true } });
    expect(await at(t.bob, d2)).toMatchObject({ occurrence_date: d2, participants_count: 1, participation: { joined: false, role: null } });
    expect((await at(t.bob, today)).participants_count).toBe(2);
    expect((await t.bob.get(`/api/v1/sessions/${s.id}`)).body.data.participation).toMatchObject({ joined: false });
    expect((await t.erin.get(`/api/v1/sessions/${s.id}`)).body.data.participation).toMatchObject({ joined: true });

    expect((await t.bob.post(`/api/v1/sessions/${s.id}/complete?date=${d2}`)).status).toBe(409);
    expect((await t.bob.post(`/api/v1/sessions/${s.id}/complete?date=${d1}`)).body.data.participation.completed_at).toMatch(ISO);
    const hostDone = await t.alice.post(`/api/v1/sessions/${s.id}/complete?date=${d1}`);
    expect(hostDone.body.data).toMatchObject({ occurrence_date: d1, status: 'completed' });
    expect((await at(t.bob, d1)).status).toBe('completed');
    expect((await at(t.bob, d2)).status).toBe('waiting');
    expect((await t.alice.get(`/api/v1/sessions/${s.id}`)).body.data.status).toBe('waiting');
    expect((await t.bob.post(`/api/v1/sessions/${s.id}/join?date=${d2}`)).status).toBe(200);
    expect((await t.bob.post(`/api/v1/sessions/${s.id}/join?date=${addDays(today, -3)}`)).status).toBe(404);

    // Listing occurrences: each carries its own count.
    const listed = (await t.bob.get(`/api/v1/sessions?keyword=series-p&day_start=${d1}&day_ends=${d2}`)).body.data;
    expect(listed.map((x: { occurrence_date: string; participants_count: number }) => [x.occurrence_date, x.participants_count])).toEqual([
      [d1, 2], [today, 2], [d2, 2],
    ]);
  });

  it('includes joined sessions in source=user', async () => {
    const s = await createSession(t.alice, { is_public: true, name: 'joined-src' });
    expect((await t.erin.get('/api/v1/sessions?source=user&keyword=joined-src')).body.data).toHaveLength(0);
    await t.erin.post(`/api/v1/sessions/${s.id}/join`);
    expect((await t.erin.get('/api/v1/sessions?source=user&keyword=joined-src')).body.data).toHaveLength(1);
    expect((await t.erin.get('/api/v1/sessions?source=user&keyword=joined-src&date=2026-03-10')).body.data).toHaveLength(1);
  });
});
