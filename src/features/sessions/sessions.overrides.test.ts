import { expect, it } from 'vitest';
import { type Client, describeEachDialect, errorPaths, useTestApp } from '../../../test/helpers/harness.js';
import { parseFeed } from '../calendar/calendar.test-helpers.js';
import { type SessionRecord, createSession, utcTime } from './sessions.test-helpers.js';
import { sessionsApi } from './sessions.api.js';
import { createChangesRepository } from '../../changelog/changelog.repository.js';
import { HEAD_TTL_MS } from '../changes/changes.service.js';

const DAY = 86_400_000;
const MINUTE = 60_000;
const addDays = (date: string, n: number) => new Date(Date.parse(`${date}T00:00:00Z`) + n * DAY).toISOString().slice(0, 10);
const today = () => new Date().toISOString().slice(0, 10);
const items = (list: SessionRecord[]) => list.map((s) => `${s.name}@${s.occurrence_date}`);

/** The API's occurrences of a session in [from, to], without `phase` (which moves with the clock). */
async function occurrences(client: Client, id: number, from: string, to: string) {
  const res = await client.get(`/api/v1/sessions/${id}/occurrences?from=${from}&to=${to}`);
  expect(res.status, res.text).toBe(200);
  return (res.body.data as { occurrence_date: string; starts_at: string; ends_at: string }[]).map(({ occurrence_date, starts_at, ends_at }) => ({ occurrence_date, starts_at, ends_at }));
}

async function put(client: Client, path: string, body: unknown, status = 200): Promise<SessionRecord> {
  const res = await client.put(path, body);
  expect(res.status, res.text).toBe(status);
  return res.body.data;
}

const withoutPhase = ({ phase: _phase, ...rest }: SessionRecord) => rest;

type ChangePage = { data: { type: string; id: string; record: SessionRecord | null; occurrence_date?: string }[]; next_cursor: string };

/** The change feed's next page after `cursor` (none: the first page of a full sync), once every committed change is sequenced. */
async function changes(t: { storage: Parameters<typeof createChangesRepository>[0] }, client: Client, cursor?: string): Promise<ChangePage> {
  await createChangesRepository(t.storage).sequence();
  if (t.storage.dataVersion() === undefined) await new Promise((r) => setTimeout(r, HEAD_TTL_MS + 10));
  const res = await client.get<ChangePage>(`/api/v1/changes?limit=500${cursor === undefined ? '' : `&cursor=${cursor}`}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

describeEachDialect('occurrence overrides over HTTP', (dialect) => {
  const t = useTestApp(dialect, { alice: [1], bob: [1] });

  it('edits one day of a series, moved to another, and every dated read shows it there', async () => {
    const start = addDays(today(), 5);
    const d = addDays(start, 5);
    const series = await createSession(t.alice, { name: 'daily', is_public: true, timezone: 'Europe/Berlin', schedule: start, time: '9:00 AM', is_recurring: 1, occurrence: 'daily', recurring_ends: addDays(start, 15) });
    const before = await t.alice.get(`/api/v1/sessions/${series.id}?date=${d}`);
    let cursor = (await changes(t, t.bob)).next_cursor;
    for (let page = await changes(t, t.bob, cursor); page.data.length > 0; page = await changes(t, t.bob, cursor)) cursor = page.next_cursor;
    const moved = await put(t.alice, `/api/v1/sessions/${series.id}?date=${d}`, { name: 'moved', time: '14:00', duration: 30, schedule: addDays(d, 2), snooze_enabled: true });
    expect(moved).toMatchObject({ id: series.id, occurrence_date: d, name: 'moved', time: '2:00 PM', duration: 30, schedule: addDays(d, 2), snooze_enabled: true, rrule: series.rrule });
    const seen = await t.alice.get(`/api/v1/sessions/${series.id}?date=${d}`);
    expect(withoutPhase(seen.body.data)).toEqual(withoutPhase(moved));
    expect(seen.headers.etag).not.toBe(before.headers.etag);
    // Listings by the day it takes place on, at its new instant; the series as a whole is unchanged.
    expect((await t.bob.get(`/api/v1/sessions?date=${d}&keyword=daily`)).body.data).toEqual([]);
    const there = (await t.bob.get(`/api/v1/sessions?date=${addDays(d, 2)}`)).body.data as SessionRecord[];
    expect(items(there.filter((s) => s.id === series.id))).toEqual([`daily@${addDays(d, 2)}`, `moved@${d}`]);
    const range = (await t.bob.get(`/api/v1/sessions?day_start=${addDays(d, -1)}&day_ends=${addDays(d, 2)}`)).body.data as SessionRecord[];
    expect(items(range)).toEqual([`daily@${addDays(d, -1)}`, `daily@${addDays(d, 1)}`, `daily@${addDays(d, 2)}`, `moved@${d}`]);
    expect(range[3]?.starts_at).toBe(moved.starts_at);
    expect((await t.bob.get(`/api/v1/sessions/${series.id}`)).body.data).toMatchObject({ name: 'daily', time: '9:00 AM', duration: 60 });
    const listed = await occurrences(t.bob, series.id, addDays(d, -1), addDays(d, 2));
    expect(listed.map((o) => o.occurrence_date)).toEqual([addDays(d, -1), addDays(d, 1), addDays(d, 2), d]);
    expect(listed[3]).toEqual({ occurrence_date: d, starts_at: moved.starts_at, ends_at: moved.ends_at });
    expect(Date.parse(moved.ends_at) - Date.parse(moved.starts_at)).toBe(30 * MINUTE);
    // The change feed tells of the occurrence, as GET ?date= shows it.
    const told = (await changes(t, t.bob, cursor)).data.filter((e) => e.id === String(series.id));
    expect(told.map((e) => [e.occurrence_date, e.record?.occurrence_date, e.record?.name])).toEqual([[d, d, 'moved']]);
    // Sending the same again changes nothing; the series' own version moved once.
    const version = (await t.alice.get(`/api/v1/sessions/${series.id}`)).body.data.updated_at;
    await put(t.alice, `/api/v1/sessions/${series.id}?date=${d}`, { name: 'moved' });
    expect((await t.alice.get(`/api/v1/sessions/${series.id}`)).body.data.updated_at).toBe(version);
    // Logged as an edit of that occurrence: what session.updated webhooks show (fanout reads it).
    const logged = await t.storage.db.selectFrom('changes').select(['action', 'occurrence_date']).where('record_id', '=', series.id).where('kind', '=', 'session').orderBy('id').execute();
    expect(logged.at(-1)).toEqual({ action: 'updated', occurrence_date: d });
  });

  it('refuses fields one occurrence cannot have (422), days that are no occurrence (404), and others’ sessions (403)', async () => {
    const start = addDays(today(), 3);
    const series = await createSession(t.alice, { name: 'weekly', is_public: true, schedule: start, is_recurring: 1, occurrence: 'weekly', recurring_ends: addDays(start, 60) });
    const path = `/api/v1/sessions/${series.id}?date=${addDays(start, 7)}`;
    expect(errorPaths(await t.alice.put(path, { name: 'x', is_public: false, timezone: 'UTC', org_id: 1, recurring_ends: addDays(start, 30), occurrence: 'daily', status: 'completed' }))).toEqual(
      ['/is_public', '/occurrence', '/org_id', '/recurring_ends', '/status', '/timezone'],
    );
    expect(errorPaths(await t.alice.put(path, { duration: 0 }))).toEqual(['/duration']);
    expect((await t.alice.put(`/api/v1/sessions/${series.id}?date=${addDays(start, 1)}`, { name: 'x' })).status).toBe(404);
    expect((await t.alice.put(`/api/v1/sessions/${series.id}?date=${addDays(start, 63)}`, { name: 'x' })).status).toBe(404);
    expect((await t.bob.put(path, { name: 'x' })).status).toBe(403);
    const hidden = await createSession(t.alice, { name: 'private', schedule: start, is_recurring: 1, occurrence: 'daily' });
    expect((await t.bob.put(`/api/v1/sessions/${hidden.id}?date=${start}`, { name: 'x' })).status).toBe(404);
    expect(errorPaths(await t.alice.put(`/api/v1/sessions/${series.id}?scope=following`, { name: 'x' }))).toEqual(['/date']);
    expect(errorPaths(await t.alice.put(`${path}&scope=series`, { name: 'x' }))).toEqual(['/date']);
    expect((await t.alice.get(`/api/v1/sessions/${series.id}?date=${addDays(start, 7)}`)).body.data.name).toBe('weekly');
  });

  it('keeps an override through series edits (only what it did not set changes) and forgets it with its deleted day', async () => {
    const start = addDays(today(), 2);
    const d = addDays(start, 2);
    const series = await createSession(t.alice, { name: 'base', schedule: start, time: '9:00 AM', timezone: 'UTC', is_recurring: 1, occurrence: 'daily', recurring_ends: addDays(start, 9) });
    await put(t.alice, `/api/v1/sessions/${series.id}?date=${d}`, { name: 'special' });
    await put(t.alice, `/api/v1/sessions/${series.id}`, { name: 'renamed', time: '10:00 AM', duration: 45 });
    expect(await (await t.alice.get(`/api/v1/sessions/${series.id}?date=${d}`)).body.data).toMatchObject({ name: 'special', time: '10:00 AM', duration: 45, starts_at: `${d}T10:00:00.000Z` });
    expect((await t.alice.get(`/api/v1/sessions/${series.id}?date=${addDays(d, 1)}`)).body.data.name).toBe('renamed');
    // If-Match of one occurrence's edit is the tag GET ?date= gave.
    const next = `/api/v1/sessions/${series.id}?date=${addDays(d, 1)}`;
    const tag = String((await t.alice.get(next)).headers.etag);
    expect((await t.alice.request('PUT', next, { duration: 20 }, { 'if-match': tag })).status).toBe(200);
    expect((await t.alice.request('PUT', next, { duration: 25 }, { 'if-match': tag })).status).toBe(412);
    expect((await t.alice.delete(`/api/v1/sessions/${series.id}?scope=occurrence&date=${d}`)).status).toBe(204);
    expect((await t.alice.get(`/api/v1/sessions/${series.id}?date=${d}`)).status).toBe(404);
    expect((await t.alice.put(`/api/v1/sessions/${series.id}?date=${d}`, { name: 'again' })).status).toBe(404);
    const left = await t.storage.db.selectFrom('session_overrides').select('occurrence_date').where('session_id', '=', series.id).execute();
    expect(left).toEqual([{ occurrence_date: addDays(d, 1) }]);
  });

  it('splits a series with scope=following: participation and overrides from that day move to the new one', async () => {
    const start = addDays(today(), 2);
    const split = addDays(start, 4);
    const series = await createSession(t.alice, { name: 'team', is_public: true, collaborator: ['bob'], schedule: start, time: '9:00 AM', timezone: 'UTC', is_recurring: 1, occurrence: 'daily', recurring_ends: addDays(start, 9) });
    await createSession(t.bob, { name: 'unrelated', schedule: start });
    expect((await t.bob.post(`/api/v1/sessions/${series.id}/join?date=${addDays(split, 1)}`)).status).toBe(200);
    expect((await t.bob.post(`/api/v1/sessions/${series.id}/join?date=${addDays(split, -1)}`)).status).toBe(200);
    await put(t.alice, `/api/v1/sessions/${series.id}?date=${addDays(split, 2)}`, { name: 'special', duration: 15 });
    // On the first occurrence it edits the series.
    expect((await put(t.alice, `/api/v1/sessions/${series.id}?date=${start}&scope=following`, { duration: 50 })).id).toBe(series.id);
    const res = await t.alice.put(`/api/v1/sessions/${series.id}?date=${split}&scope=following`, { name: 'team v2', time: '11:00 AM' });
    expect(res.status, res.text).toBe(201);
    const created = res.body.data as SessionRecord;
    expect(res.headers.location).toBe(`/api/v1/sessions/${created.id}`);
    expect(created).toMatchObject({ split_from: series.id, name: 'team v2', time: '11:00 AM', duration: 50, collaborator: ['bob'], is_recurring: 1, recurring_ends: addDays(start, 9), starts_at: `${split}T11:00:00.000Z` });
    expect((await t.alice.get(`/api/v1/sessions/${series.id}`)).body.data).toMatchObject({ recurring_ends: addDays(split, -1), name: 'team' });
    expect((await t.alice.get(`/api/v1/sessions/${series.id}`)).body.data).not.toHaveProperty('split_from');
    expect((await t.alice.get(`/api/v1/sessions/${series.id}?date=${split}`)).status).toBe(404);
    const joined = (await t.bob.get(`/api/v1/sessions/${created.id}?date=${addDays(split, 1)}`)).body.data as SessionRecord;
    expect(joined.participation).toMatchObject({ joined: true });
    expect(joined.participants_count).toBe(2);
    expect((await t.bob.get(`/api/v1/sessions/${series.id}?date=${addDays(split, -1)}`)).body.data.participants_count).toBe(2);
    expect((await t.alice.get(`/api/v1/sessions/${created.id}?date=${addDays(split, 2)}`)).body.data).toMatchObject({ name: 'special', duration: 15, starts_at: `${addDays(split, 2)}T11:00:00.000Z` });
    // A dated listing finds the moved participation and override on the new series (its flags, migration 0033).
    const listed = (await t.bob.get(`/api/v1/sessions?day_start=${addDays(split, 1)}&day_ends=${addDays(split, 2)}`)).body.data as SessionRecord[];
    expect(listed.filter((s) => s.id === created.id).map((s) => [s.occurrence_date, s.name, s.participants_count])).toEqual([
      [addDays(split, 1), 'team v2', 2],
      [addDays(split, 2), 'special', 1],
    ]);
    const days = await occurrences(t.alice, created.id, start, addDays(start, 9));
    expect(days.map((o) => o.occurrence_date)).toEqual([0, 1, 2, 3, 4, 5].map((n) => addDays(split, n)));
    expect((await occurrences(t.alice, series.id, start, addDays(start, 9))).map((o) => o.occurrence_date)).toEqual([0, 1, 2, 3].map((n) => addDays(start, n)));
  });

  it('shows an occurrence moved to now in /me/now and in the time-triggered events’ source, at its new instant', async () => {
    const now = Math.floor(Date.now() / MINUTE) * MINUTE;
    const minute = new Date(now - MINUTE);
    const time = utcTime(minute);
    const d = minute.toISOString().slice(0, 10);
    const series = await createSession(t.alice, { name: 'later', schedule: addDays(d, -1), time: '11:00 PM', timezone: 'UTC', is_recurring: 1, occurrence: 'daily', recurring_ends: addDays(d, 5) });
    // Day d's occurrence, moved to a minute ago: running now.
    const edited = await put(t.alice, `/api/v1/sessions/${series.id}?date=${d}`, { name: 'now', time, duration: 30 });
    expect(edited.starts_at).toBe(minute.toISOString());
    const res = await t.alice.get('/api/v1/me/now');
    expect(res.status, res.text).toBe(200);
    expect(items((res.body.data.active as SessionRecord[]).filter((s) => s.id === series.id))).toEqual([`now@${d}`]);
    // Completing goes by its new start too (its own time, 11 PM, may be still ahead).
    expect((await t.alice.post(`/api/v1/sessions/${series.id}/complete?date=${d}`)).status).toBe(200);
    const crossing = await sessionsApi(t.storage).crossing({ from: new Date(now - 2 * MINUTE).toISOString(), to: new Date(now).toISOString() });
    expect(crossing.filter((c) => c.session_id === series.id && c.event === 'session.started')).toMatchObject([{ occurrence_date: d, starts_at: edited.starts_at }]);
  });

  it('writes an override into the calendar feed as a RECURRENCE-ID exception that ical.js expands to exactly /occurrences, across DST', async () => {
    const series = await createSession(t.alice, { name: 'Berlin', timezone: 'Europe/Berlin', schedule: '2027-03-20', time: '9:00 AM', is_recurring: 1, occurrence: 'daily', recurring_ends: '2027-04-05' });
    await put(t.alice, `/api/v1/sessions/${series.id}?date=2027-03-26`, { name: 'Berlin moved', schedule: '2027-03-29', time: '7:30 AM' });
    await put(t.alice, `/api/v1/sessions/${series.id}?date=2027-03-31`, { duration: 20 });
    expect((await t.alice.delete(`/api/v1/sessions/${series.id}?scope=occurrence&date=2027-03-22`)).status).toBe(204);
    const feed = (await t.alice.post('/api/v1/calendar-feeds', {})).body.data as { url: string };
    const text = (await t.anonymous.get(feed.url)).text;
    expect(text).toContain('RECURRENCE-ID;TZID=Europe/Berlin:20270326T090000');
    const event = parseFeed(text).events.get(`session-${series.id}@focus`);
    const byStart = (a: { starts_at: string }, b: { starts_at: string }) => (a.starts_at < b.starts_at ? -1 : 1);
    const api = await occurrences(t.alice, series.id, '2027-03-01', '2027-04-30');
    expect(api).toHaveLength(16);
    expect(api.find((o) => o.occurrence_date === '2027-03-26')).toEqual({ occurrence_date: '2027-03-26', starts_at: '2027-03-29T05:30:00.000Z', ends_at: '2027-03-29T06:30:00.000Z' });
    const expanded = (event?.expand('2027-03-01', '2027-04-30') ?? []).map((o) => ({ starts_at: o.starts_at, ends_at: o.ends_at })).sort(byStart);
    expect(expanded).toEqual(api.map(({ starts_at, ends_at }) => ({ starts_at, ends_at })));
  });
});
