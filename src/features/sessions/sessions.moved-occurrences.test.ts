import { expect, it } from 'vitest';
import { type Client, describeEachDialect, useTestApp } from '../../../test/helpers/harness.js';
import { type SessionRecord, createSession, listAllSessions, utcTime } from './sessions.test-helpers.js';
import { sessionsApi } from './sessions.api.js';
import { INDEX_HORIZON_DAYS } from './sessions.occurrences.js';

/*
 * Occurrences an override moves across the occurrence index's span (contract section 10):
 * from beyond its horizon into it, out of it, and between two days beyond it. Each is
 * listed on the day it takes place, in start order, page after page; and so again when the
 * series is expanded per request (a session the index does not hold).
 */

const DAY = 86_400_000;
const MINUTE = 60_000;
const addDays = (date: string, n: number) => new Date(Date.parse(`${date}T00:00:00Z`) + n * DAY).toISOString().slice(0, 10);
const today = () => new Date().toISOString().slice(0, 10);
const items = (list: SessionRecord[]) => list.map((s) => `${s.name}@${s.occurrence_date}`);

async function put(client: Client, path: string, body: unknown): Promise<SessionRecord> {
  const res = await client.put(path, body);
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

describeEachDialect('occurrences moved across the index horizon', (dialect) => {
  const t = useTestApp(dialect, { alice: [1], bob: [1] });
  const beyond = (n: number) => addDays(today(), INDEX_HORIZON_DAYS + n);

  /** A daily series from today, unending, with three days moved: into the span, out of it, and within the days beyond it. */
  async function movedSeries() {
    const series = await createSession(t.alice, { name: 'daily', is_public: true, timezone: 'UTC', schedule: today(), time: '9:00 AM', is_recurring: 1, occurrence: 'daily' });
    const path = (date: string) => `/api/v1/sessions/${series.id}?date=${date}`;
    const moves = {
      intoSpan: await put(t.alice, path(beyond(100)), { name: 'came back', schedule: addDays(today(), 3), time: '10:00' }),
      outOfSpan: await put(t.alice, path(addDays(today(), 10)), { name: 'went ahead', schedule: beyond(50), time: '8:00' }),
      beyondBoth: await put(t.alice, path(beyond(20)), { name: 'later still', schedule: beyond(30), time: '7:00' }),
    };
    return { series, moves };
  }

  /** What every dated read shows of the three moves. */
  async function expectMovesListed(id: number) {
    const on = async (date: string) => items(((await t.bob.get(`/api/v1/sessions?date=${date}`)).body.data as SessionRecord[]).filter((s) => s.id === id));
    expect(await on(addDays(today(), 3))).toEqual([`daily@${addDays(today(), 3)}`, `came back@${beyond(100)}`]);
    expect(await on(addDays(today(), 10))).toEqual([]);
    expect(await on(beyond(50))).toEqual([`went ahead@${addDays(today(), 10)}`, `daily@${beyond(50)}`]);
    expect(await on(beyond(20))).toEqual([]);
    expect(await on(beyond(30))).toEqual([`later still@${beyond(20)}`, `daily@${beyond(30)}`]);
    expect(await on(beyond(100))).toEqual([]);
    // A range across the horizon, page after page: each day once, in start order.
    const range = await listAllSessions(t.bob, `day_start=${beyond(18)}&day_ends=${beyond(31)}`, 3);
    const expected = [18, 19, 21, 22, 23, 24, 25, 26, 27, 28, 29].map((n) => `daily@${beyond(n)}`);
    expect(items(range.filter((s) => s.id === id))).toEqual([...expected, `later still@${beyond(20)}`, `daily@${beyond(30)}`, `daily@${beyond(31)}`]);
    const starts = range.map((s) => s.starts_at);
    expect(starts).toEqual([...starts].sort());
  }

  it('lists each moved occurrence on the day it takes place, from the index', async () => {
    const { series, moves } = await movedSeries();
    expect(moves.intoSpan).toMatchObject({ occurrence_date: beyond(100), starts_at: `${addDays(today(), 3)}T10:00:00.000Z` });
    await expectMovesListed(series.id);
    // Moved back to its own day, it leaves the index outside the span and is expanded there again.
    await put(t.alice, `/api/v1/sessions/${series.id}?date=${beyond(100)}`, { schedule: beyond(100) });
    const on = (await t.bob.get(`/api/v1/sessions?date=${beyond(100)}`)).body.data as SessionRecord[];
    expect(items(on.filter((s) => s.id === series.id))).toEqual([`came back@${beyond(100)}`]);
    expect(items(((await t.bob.get(`/api/v1/sessions?date=${addDays(today(), 3)}`)).body.data as SessionRecord[]).filter((s) => s.id === series.id))).toEqual([`daily@${addDays(today(), 3)}`]);
  });

  it('lists them alike for a series the index does not hold, expanded per request', async () => {
    const { series } = await movedSeries();
    await t.storage.db.deleteFrom('session_occurrences').where('session_id', '=', series.id).execute();
    await t.storage.db.updateTable('sessions').set({ indexed_through: null, indexed_from: null }).where('id', '=', series.id).execute();
    await expectMovesListed(series.id);
    // The background indexer then holds them again, with the same answers.
    while ((await sessionsApi(t.storage).indexStep(100)) > 0);
    await expectMovesListed(series.id);
  });

  it('shows an occurrence moved from beyond the horizon to now in /me/now and the time-triggered events', async () => {
    const now = Math.floor(Date.now() / MINUTE) * MINUTE;
    const minute = new Date(now - MINUTE);
    const time = utcTime(minute);
    const d = minute.toISOString().slice(0, 10);
    const series = await createSession(t.alice, { name: 'weekly', schedule: addDays(d, 1), time: '6:00 AM', timezone: 'UTC', is_recurring: 1, occurrence: 'weekly' });
    const far = addDays(d, 1 + 7 * 30);
    const moved = await put(t.alice, `/api/v1/sessions/${series.id}?date=${far}`, { name: 'now', schedule: d, time, duration: 30 });
    expect(moved.starts_at).toBe(minute.toISOString());
    for (const legacy of [false, true]) {
      if (legacy) {
        await t.storage.db.deleteFrom('session_occurrences').where('session_id', '=', series.id).execute();
        await t.storage.db.updateTable('sessions').set({ indexed_through: null, indexed_from: null }).where('id', '=', series.id).execute();
      }
      const res = await t.alice.get('/api/v1/me/now');
      expect(res.status, res.text).toBe(200);
      expect(items((res.body.data.active as SessionRecord[]).filter((s) => s.id === series.id)), `legacy: ${legacy}`).toEqual([`now@${far}`]);
    }
    while ((await sessionsApi(t.storage).indexStep(100)) > 0);
    const crossing = await sessionsApi(t.storage).crossing({ from: new Date(now - 2 * MINUTE).toISOString(), to: new Date(now).toISOString() });
    expect(crossing.filter((c) => c.session_id === series.id && c.event === 'session.started')).toMatchObject([{ occurrence_date: far, starts_at: moved.starts_at }]);
  });
});
