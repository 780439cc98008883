import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect, errorPaths, useTestApp } from '../../../test/helpers/harness.js';
import { type SessionRecord, createSession, listAllSessions } from './sessions.test-helpers.js';

const names = (list: SessionRecord[]) => list.map((s) => s.name);
const sortedNames = (list: SessionRecord[]) => names(list).sort();

describeEachDialect('sessions listing over HTTP', (dialect) => {
  const t = useTestApp(dialect, { alice: [1], bob: [1], carol: [2], dave: [1, 2] });

  beforeAll(async () => {
    // Org 1 by alice unless said otherwise.
    await createSession(t.alice, { name: 'a-pub-standard', is_public: true, schedule: '2026-03-10', time: '9:00 AM' });
    await createSession(t.alice, { name: 'a-priv-dropin', type: 'drop-in', schedule: '2026-03-10', time: '8:00 AM' });
    await createSession(t.alice, { name: 'a-priv-collab-bob', collaborator: ['bob'], schedule: '2026-03-11', time: '9:00 AM' });
    const done = await createSession(t.alice, { name: 'a-pub-done', is_public: true, schedule: '2026-03-12', time: '9:00 AM' });
    expect((await t.alice.put(`/api/v1/sessions/${done.id}`, { status: 'completed' })).status).toBe(200);
    await createSession(t.bob, { name: 'b-pub 100% Focus_Time', is_public: true, schedule: '2026-03-31', time: '11:00 PM' });
    await createSession(t.bob, { name: 'b-priv', schedule: '2026-04-01', time: '12:00 AM' });
    // 11 PM in Los Angeles on 03-31 is 04-01 in UTC: its day is still 03-31.
    await createSession(t.bob, { name: 'b-pub-la', is_public: true, schedule: '2026-03-31', time: '11:00 PM', timezone: 'America/Los_Angeles' });
    await createSession(t.carol, { name: 'c-pub-org2', org_id: 2, is_public: true, schedule: '2026-03-10', time: '9:00 AM' });
    await createSession(t.dave, { name: 'd-pub-org2', org_id: 2, is_public: true, schedule: '2027-01-01', time: '9:00 AM' });
    await createSession(t.dave, { name: 'd-priv-org1', org_id: 1, schedule: '2025-12-31', time: '9:00 AM' });
  });

  it('lists every visible session of every org of the user, ordered by starts_at then id', async () => {
    const res = await t.alice.get('/api/v1/sessions');
    expect(res.status).toBe(200);
    expect(res.body.next_cursor).toBeNull();
    expect(names(res.body.data)).toEqual([
      'a-priv-dropin', 'a-pub-standard', 'a-priv-collab-bob', 'a-pub-done', 'b-pub 100% Focus_Time', 'b-pub-la',
    ]);
    expect(sortedNames(await listAllSessions(t.dave, '', 500))).toEqual(['a-pub-done', 'a-pub-standard', 'b-pub 100% Focus_Time', 'b-pub-la', 'c-pub-org2', 'd-priv-org1', 'd-pub-org2'].sort());
    expect(sortedNames(await listAllSessions(t.carol, '', 500))).toEqual(['c-pub-org2', 'd-pub-org2']);
    for (const s of res.body.data as SessionRecord[]) expect(s).not.toHaveProperty('occurrence_date');
  });

  it('orders equal starts_at by id', async () => {
    const x = await createSession(t.alice, { name: 'tie-1', schedule: '2030-01-01' });
    const y = await createSession(t.alice, { name: 'tie-2', schedule: '2030-01-01' });
    const list = await listAllSessions(t.alice, 'keyword=tie-', 1);
    expect(list.map((s) => s.id)).toEqual([x.id, y.id]);
    await t.alice.delete(`/api/v1/sessions/${x.id}`);
    await t.alice.delete(`/api/v1/sessions/${y.id}`);
  });

  it('filters by org_id (only the user’s own orgs)', async () => {
    expect(sortedNames((await t.dave.get('/api/v1/sessions?org_id=2')).body.data)).toEqual(['c-pub-org2', 'd-pub-org2']);
    expect(errorPaths(await t.alice.get('/api/v1/sessions?org_id=2'))).toEqual(['/org_id']);
    expect(errorPaths(await t.alice.get('/api/v1/sessions?org_id=abc'))).toEqual(['/org_id']);
    expect(errorPaths(await t.alice.get('/api/v1/sessions?org_id=0'))).toEqual(['/org_id']);
  });

  it('filters by channel, type, completed and source', async () => {
    expect(sortedNames((await t.alice.get('/api/v1/sessions?channel=public')).body.data)).toEqual(
      ['a-pub-done', 'a-pub-standard', 'b-pub 100% Focus_Time', 'b-pub-la'].sort(),
    );
    expect(sortedNames((await t.alice.get('/api/v1/sessions?channel=private')).body.data)).toEqual(['a-priv-collab-bob', 'a-priv-dropin']);
    expect(sortedNames((await t.alice.get('/api/v1/sessions?type=drop-in')).body.data)).toEqual(['a-priv-dropin']);
    expect(sortedNames((await t.alice.get('/api/v1/sessions?completed=1')).body.data)).toEqual(['a-pub-done']);
    expect(names((await t.alice.get('/api/v1/sessions?completed=0')).body.data)).not.toContain('a-pub-done');
    expect((await t.alice.get('/api/v1/sessions?completed=0')).body.data).toHaveLength(5);
    expect(sortedNames((await t.bob.get('/api/v1/sessions?source=user')).body.data)).toEqual(
      ['a-priv-collab-bob', 'b-priv', 'b-pub 100% Focus_Time', 'b-pub-la'].sort(),
    );
    expect(sortedNames((await t.bob.get('/api/v1/sessions?source=organization')).body.data)).toEqual(
      ['a-priv-collab-bob', 'a-pub-done', 'a-pub-standard', 'b-priv', 'b-pub 100% Focus_Time', 'b-pub-la'].sort(),
    );
    expect(sortedNames((await t.bob.get('/api/v1/sessions?source=user&channel=private&type=standard')).body.data)).toEqual(['a-priv-collab-bob', 'b-priv']);
  });

  it('filters by keyword: case-insensitive substring, wildcards literal', async () => {
    expect(sortedNames((await t.alice.get('/api/v1/sessions?keyword=PUB-')).body.data)).toEqual(['a-pub-done', 'a-pub-standard', 'b-pub-la']);
    expect(names((await t.alice.get(`/api/v1/sessions?keyword=${encodeURIComponent('100%')}`)).body.data)).toEqual(['b-pub 100% Focus_Time']);
    expect(names((await t.alice.get(`/api/v1/sessions?keyword=${encodeURIComponent('%')}`)).body.data)).toEqual(['b-pub 100% Focus_Time']);
    expect(names((await t.alice.get('/api/v1/sessions?keyword=s_t')).body.data)).toEqual(['b-pub 100% Focus_Time']);
    expect((await t.alice.get('/api/v1/sessions?keyword=_')).body.data).toHaveLength(1);
    expect((await t.alice.get('/api/v1/sessions?keyword=a_p')).body.data).toHaveLength(0);
    expect((await t.alice.get(`/api/v1/sessions?keyword=${encodeURIComponent('\\')}`)).body.data).toHaveLength(0);
    expect(names((await t.alice.get('/api/v1/sessions?keyword=focus_time')).body.data)).toEqual(['b-pub 100% Focus_Time']);
  });

  it('filters by date: the local day of the session', async () => {
    expect(names((await t.alice.get('/api/v1/sessions?date=2026-03-10')).body.data)).toEqual(['a-priv-dropin', 'a-pub-standard']);
    const lastOfMarch = (await t.alice.get('/api/v1/sessions?date=2026-03-31')).body.data as SessionRecord[];
    expect(names(lastOfMarch)).toEqual(['b-pub 100% Focus_Time', 'b-pub-la']);
    expect(lastOfMarch.map((s) => s.occurrence_date)).toEqual(['2026-03-31', '2026-03-31']);
    expect(lastOfMarch[1]?.starts_at).toBe('2026-04-01T06:00:00.000Z');
    expect((await t.bob.get('/api/v1/sessions?date=2026-04-01')).body.data.map((s: SessionRecord) => s.name)).toEqual(['b-priv']);
  });

  it('filters by an inclusive day range of at most 366 days', async () => {
    expect(names((await t.alice.get('/api/v1/sessions?day_start=2026-03-11&day_ends=2026-03-12')).body.data)).toEqual(['a-priv-collab-bob', 'a-pub-done']);
    expect(sortedNames((await t.dave.get('/api/v1/sessions?day_start=2025-12-31&day_ends=2026-12-31')).body.data)).toEqual(
      ['a-pub-done', 'a-pub-standard', 'b-pub 100% Focus_Time', 'b-pub-la', 'c-pub-org2', 'd-priv-org1'].sort(),
    );
    // 2026 has 365 days: 2026-01-01..2027-01-01 is 366 days, the most allowed.
    expect(names((await t.dave.get('/api/v1/sessions?day_start=2026-01-01&day_ends=2027-01-01&org_id=2')).body.data)).toEqual(['c-pub-org2', 'd-pub-org2']);
    expect(errorPaths(await t.dave.get('/api/v1/sessions?day_start=2025-12-31&day_ends=2027-01-01'))).toEqual(['/day_ends']);
    expect(errorPaths(await t.dave.get('/api/v1/sessions?day_start=2026-03-12&day_ends=2026-03-11'))).toEqual(['/day_ends']);
    expect(errorPaths(await t.alice.get('/api/v1/sessions?org_id=2&day_start=2026-03-12&day_ends=2026-03-11'))).toEqual(['/day_ends', '/org_id']);
    expect(errorPaths(await t.alice.get('/api/v1/sessions?day_ends=2026-03-11'))).toEqual(['/day_start']);
    expect((await t.dave.get('/api/v1/sessions?day_start=2026-03-12&day_ends=2026-03-12')).status).toBe(200);
    // Dates are limited to the years 0001–9998; day_start alone stops there.
    expect(errorPaths(await t.dave.get('/api/v1/sessions?date=9999-01-01'))).toEqual(['/date']);
    expect((await t.dave.get('/api/v1/sessions?day_start=9998-12-01')).status).toBe(200);
    // day_start alone: that day and the 365 after it.
    expect(sortedNames((await t.dave.get('/api/v1/sessions?day_start=2026-01-02')).body.data)).toEqual(
      ['a-pub-done', 'a-pub-standard', 'b-pub 100% Focus_Time', 'b-pub-la', 'c-pub-org2', 'd-pub-org2'].sort(),
    );
  });

  it.each([
    'channel=secret', 'type=casual', 'completed=2', 'completed=yes', 'source=everyone', 'keyword=', 'date=2026-02-30', 'date=tomorrow',
    'day_start=2026-13-01', 'day_ends=2026-01-01', 'limit=0', 'limit=501', 'limit=abc', 'cursor=garbage', 'cursor=', 'colour=red',
    'date=2026-03-10&day_start=2026-03-10',
  ])('rejects %s with 422', async (query) => {
    const res = await t.alice.get(`/api/v1/sessions?${query}`);
    expect(res.status, res.text).toBe(422);
    expect(res.body.errors.length).toBeGreaterThan(0);
  });

  it('walks every item exactly once with cursor paging, at every page size', async () => {
    const all = (await t.dave.get('/api/v1/sessions?limit=500')).body.data as SessionRecord[];
    expect(all).toHaveLength(7);
    for (const limit of [1, 2, 3, 6, 7, 8, 500]) {
      expect((await listAllSessions(t.dave, '', limit)).map((s) => s.id)).toEqual(all.map((s) => s.id));
    }
    const ranged = (await t.dave.get('/api/v1/sessions?day_start=2025-06-01&day_ends=2026-05-31')).body.data as SessionRecord[];
    expect((await listAllSessions(t.dave, 'day_start=2025-06-01&day_ends=2026-05-31', 2)).map((s) => s.id)).toEqual(ranged.map((s) => s.id));
    const sorted = [...all].sort((a, b) => (a.starts_at < b.starts_at ? -1 : a.starts_at > b.starts_at ? 1 : a.id - b.id));
    expect(all.map((s) => s.id)).toEqual(sorted.map((s) => s.id));
  });

  it('counts participants per listed session', async () => {
    const s = await createSession(t.alice, { name: 'counted', is_public: true, schedule: '2031-05-05' });
    expect((await t.bob.post(`/api/v1/sessions/${s.id}/join`)).status).toBe(200);
    expect((await t.dave.post(`/api/v1/sessions/${s.id}/join`)).status).toBe(200);
    expect((await t.alice.get('/api/v1/sessions?keyword=counted')).body.data[0].participants_count).toBe(3);
    expect((await t.alice.get('/api/v1/sessions?keyword=counted&date=2031-05-05')).body.data[0].participants_count).toBe(3);
    expect((await t.alice.get('/api/v1/sessions?keyword=counted&day_start=2031-05-01&day_ends=2031-05-31')).body.data[0].participants_count).toBe(3);
    await t.alice.delete(`/api/v1/sessions/${s.id}`);
  });

  it("keeps every page's counts as GET shows them while members join, leave and edit between reads", async () => {
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const after = new Date(Date.now() + 2 * 86_400_000).toISOString().slice(0, 10);
    const one = await createSession(t.alice, { name: 'tally one', is_public: true, schedule: '2031-06-01' });
    const series = await createSession(t.alice, { name: 'tally series', is_public: true, schedule: tomorrow, is_recurring: 1, occurrence: 'daily' });
    const pages = ['keyword=tally', `keyword=tally&day_start=${tomorrow}&day_ends=${after}`];
    // Each listed record's count as GET /sessions/{id} tells it, for the same occurrence.
    const check = async (expected: number[][]) => {
      const got: number[][] = [];
      for (const page of pages) {
        const listed = (await t.bob.get(`/api/v1/sessions?${page}`)).body.data as (SessionRecord & { occurrence_date?: string; participants_count: number })[];
        for (const r of listed) {
          const one = (await t.bob.get(`/api/v1/sessions/${r.id}${r.occurrence_date === undefined ? '' : `?date=${r.occurrence_date}`}`)).body.data;
          expect(r.participants_count, `${page}: ${r.name} ${r.occurrence_date ?? ''}`).toBe(one.participants_count);
        }
        got.push(listed.map((r) => r.participants_count));
      }
      expect(got).toEqual(expected);
    };
    await check([[1, 1], [1, 1]]);
    expect((await t.bob.post(`/api/v1/sessions/${one.id}/join`)).status).toBe(200);
    expect((await t.bob.post(`/api/v1/sessions/${series.id}/join?date=${tomorrow}`)).status).toBe(200);
    expect((await t.dave.post(`/api/v1/sessions/${series.id}/join?date=${after}`)).status).toBe(200);
    // The host joining adds no one: the host always counts.
    expect((await t.alice.post(`/api/v1/sessions/${series.id}/join?date=${after}`)).status).toBe(200);
    // The whole series counts its next occurrence (tomorrow's); the one-off is last (2031).
    await check([[2, 2], [2, 2]]);
    expect((await t.alice.put(`/api/v1/sessions/${series.id}`, { name: 'tally series renamed' })).status).toBe(200);
    expect((await t.bob.post(`/api/v1/sessions/${one.id}/leave`)).status).toBe(200);
    await check([[2, 1], [2, 2]]);
    for (const s of [one, series]) await t.alice.delete(`/api/v1/sessions/${s.id}`);
  });

  it('needs a token', async () => {
    expect((await t.anonymous.get('/api/v1/sessions')).status).toBe(401);
  });
});
