import { expect, it } from 'vitest';
import { describeEachDialect, useTestApp } from '../../../test/helpers/harness.js';
import { sessionRow } from '../../../test/helpers/session-row.js';
import { toJson } from '../../storage/columns.js';
import { createSessionsService } from './sessions.service.js';
import { PAGE_BYTE_BUDGET } from '../../toolkit/api.js';
import { MAX_REMOVED_OCCURRENCES } from './sessions.schema.js';
import { INDEX_HORIZON_DAYS, INDEX_PAST_DAYS } from './sessions.occurrences.js';
import { type SessionRecord, createSession, listAllSessions as listAll } from './sessions.test-helpers.js';

const utcToday = () => new Date().toISOString().slice(0, 10);
const addDays = (date: string, n: number) => new Date(Date.parse(`${date}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
const items = (list: SessionRecord[]) => list.map((s) => `${s.name}@${s.occurrence_date}`);

/**
 * The sessions read side (issue 12 / contract section 6): instants, cursors, bounded pages,
 * and the occurrence index agreeing with expansion per request.
 */
describeEachDialect('sessions read side', (dialect) => {
  const t = useTestApp(dialect, { alice: [1], bob: [1] });

  it("gives a series the instants of its first occurrence, which rrule's DTSTART and /occurrences agree on", async () => {
    // 2026-12-01 is a Tuesday; the series meets on Mondays and Wednesdays.
    const s = await createSession(t.alice, {
      name: 'first-occurrence',
      schedule: '2026-12-01',
      time: '9:00 AM',
      timezone: 'Europe/Berlin',
      is_recurring: 1,
      occurrence: 'weekly',
      recurring_days: [1, 3],
      recurring_ends: '2026-12-31',
    });
    expect(s.starts_at).toBe('2026-12-02T08:00:00.000Z');
    expect(s.ends_at).toBe('2026-12-02T09:00:00.000Z');
    expect(s.rrule).toMatch(/^DTSTART;TZID=Europe\/Berlin:20261202T090000\n/);
    const occurrences = await t.alice.get(`/api/v1/sessions/${s.id}/occurrences?from=2026-11-01&to=2026-12-31`);
    expect(occurrences.body.data[0]).toEqual({ occurrence_date: '2026-12-02', starts_at: s.starts_at, ends_at: s.ends_at, phase: expect.any(String) });
    // Removing the first occurrence moves the series' instants to the next one.
    expect((await t.alice.delete(`/api/v1/sessions/${s.id}?scope=occurrence&date=2026-12-02`)).status).toBe(204);
    const moved = (await t.alice.get(`/api/v1/sessions/${s.id}`)).body.data;
    expect(moved.starts_at).toBe('2026-12-07T08:00:00.000Z');
    expect(moved.rrule).toMatch(/^DTSTART;TZID=Europe\/Berlin:20261207T090000\n/);
  });

  it('reads back the recurrence fields of a one-off session empty, also after switching a series off', async () => {
    const oneOff = await createSession(t.alice, {
      name: 'not-a-series',
      is_recurring: 0,
      occurrence: 'weekly',
      recurring_days: [1, 2],
      recurring_start: '2026-03-01',
      recurring_ends: '2026-04-01',
      recurring_month_option: 'exact',
      fallback_option: 1,
    });
    const empty = {
      recurring_start: null,
      recurring_ends: null,
      occurrence: null,
      recurring_days: [],
      recurring_month_option: null,
      recurring_month_week_pos: null,
      recurring_month_week_day: null,
      fallback_option: 0,
      rrule: null,
    };
    expect(oneOff).toMatchObject(empty);
    const series = await createSession(t.alice, { name: 'switched-off', is_recurring: 1, occurrence: 'daily', recurring_ends: '2026-03-20' });
    const off = await t.alice.put(`/api/v1/sessions/${series.id}`, { is_recurring: 0 });
    expect(off.status, off.text).toBe(200);
    expect(off.body.data).toMatchObject(empty);
    // Its removed occurrences went with the rest of its recurrence: switched on again, every day is back.
    const removed = await createSession(t.alice, { name: 'switched back', schedule: '2027-03-01', is_recurring: 1, occurrence: 'daily', recurring_ends: '2027-03-05' });
    expect((await t.alice.delete(`/api/v1/sessions/${removed.id}?scope=occurrence&date=2027-03-03`)).status).toBe(204);
    expect((await t.alice.put(`/api/v1/sessions/${removed.id}`, { is_recurring: 0 })).status).toBe(200);
    const on = await t.alice.put(`/api/v1/sessions/${removed.id}`, { is_recurring: 1, occurrence: 'daily', recurring_ends: '2027-03-05' });
    expect(on.status, on.text).toBe(200);
    expect(on.body.data.rrule).not.toContain('EXDATE');
    const days = await t.alice.get(`/api/v1/sessions/${removed.id}/occurrences?from=2027-03-01&to=2027-03-31`);
    expect(days.body.data.map((o: { occurrence_date: string }) => o.occurrence_date)).toEqual(['2027-03-01', '2027-03-02', '2027-03-03', '2027-03-04', '2027-03-05']);
  });

  it('lists both occurrences that share an instant in a zone that skipped a day (Pacific/Apia, 2011-12-30)', async () => {
    const s = await createSession(t.alice, {
      name: 'apia',
      schedule: '2011-12-28',
      time: '9:00 AM',
      timezone: 'Pacific/Apia',
      is_recurring: 1,
      occurrence: 'daily',
      recurring_ends: '2012-01-01',
    });
    const all = await listAll(t.alice, 'keyword=apia&day_start=2011-12-28&day_ends=2012-01-01', 1);
    expect(items(all)).toEqual(['apia@2011-12-28', 'apia@2011-12-29', 'apia@2011-12-30', 'apia@2011-12-31', 'apia@2012-01-01']);
    const [, , skipped, next] = all as [SessionRecord, SessionRecord, SessionRecord, SessionRecord];
    expect(skipped.starts_at).toBe(next.starts_at);
    expect(new Set(all.map((i: SessionRecord) => i.id))).toEqual(new Set([s.id]));
  });

  it('lists occurrences without repeating the removed-occurrence list; the series record keeps it', async () => {
    const s = await createSession(t.alice, {
      name: 'exdates',
      schedule: '2026-05-01',
      is_recurring: 1,
      occurrence: 'daily',
      recurring_ends: '2026-05-31',
    });
    for (const date of ['2026-05-02', '2026-05-03', '2026-05-04']) {
      expect((await t.alice.delete(`/api/v1/sessions/${s.id}?scope=occurrence&date=${date}`)).status).toBe(204);
    }
    const record = (await t.alice.get(`/api/v1/sessions/${s.id}`)).body.data;
    expect(record.rrule).toContain('EXDATE:20260502T090000Z,20260503T090000Z,20260504T090000Z');
    const listed = await listAll(t.alice, 'keyword=exdates&day_start=2026-05-01&day_ends=2026-05-31', 50);
    expect(listed).toHaveLength(28);
    for (const item of listed) {
      expect(item.rrule).toBe(record.rrule.slice(0, record.rrule.indexOf('\nEXDATE')));
    }
  });

  it(`keeps at most ${MAX_REMOVED_OCCURRENCES} removed occurrences per series: one more is 409`, async () => {
    const s = await createSession(t.alice, { name: 'many-removed', schedule: '2026-01-01', is_recurring: 1, occurrence: 'daily' });
    const dates = Array.from({ length: MAX_REMOVED_OCCURRENCES }, (_, i) => new Date(Date.UTC(2026, 0, 2 + i)).toISOString().slice(0, 10));
    for (let i = 0; i < dates.length; i += 200) {
      await t.storage.db.insertInto('session_exceptions').values(dates.slice(i, i + 200).map((occurrence_date) => ({ session_id: s.id, occurrence_date }))).execute();
    }
    const res = await t.alice.delete(`/api/v1/sessions/${s.id}?scope=occurrence&date=2029-06-01`);
    expect(res.status, res.text).toBe(409);
    expect(res.body.detail).toContain(String(MAX_REMOVED_OCCURRENCES));
    // Nothing was removed: the occurrence is still there.
    expect((await t.alice.get(`/api/v1/sessions/${s.id}?date=2029-06-01`)).status).toBe(200);
  });

  it('stops a page at its byte budget and continues it with next_cursor', async () => {
    // Sessions at the weight limit: a full page of 500 would be several MiB.
    const urls = Array.from({ length: 60 }, (_, i) => `https://example.com/${String(i).padStart(3, '0')}/${'x'.repeat(180)}`);
    const blocker = toJson({ mode: 'custom' as const, category: [], urls });
    const user = await t.storage.db.selectFrom('users').select('id').where('handle', '=', 'bob').executeTakeFirstOrThrow();
    const rows = Array.from({ length: 300 }, (_, i) =>
      sessionRow(`heavy ${String(i).padStart(3, '0')}`, user.id, { schedule: '2031-01-01', website_blocker_enabled: 1, website_blocker: blocker }),
    );
    for (let i = 0; i < rows.length; i += 100) await t.storage.db.insertInto('sessions').values(rows.slice(i, i + 100)).execute();
    const first = await t.bob.get('/api/v1/sessions?keyword=heavy&limit=500');
    expect(first.status).toBe(200);
    expect(first.body.data.length).toBeGreaterThan(0);
    expect(first.body.data.length).toBeLessThan(300);
    expect(first.body.next_cursor).not.toBeNull();
    expect(first.text.length).toBeLessThan(PAGE_BYTE_BUDGET * 1.2);
    // Only next_cursor: null ends the listing; a page may be short while it is set.
    const seen: string[] = first.body.data.map((s: SessionRecord) => s.name);
    for (let cursor = first.body.next_cursor; cursor !== null; ) {
      const page = await t.bob.get(`/api/v1/sessions?keyword=heavy&limit=500&cursor=${encodeURIComponent(cursor)}`);
      seen.push(...page.body.data.map((s: SessionRecord) => s.name));
      cursor = page.body.next_cursor;
    }
    expect(seen).toEqual(rows.map((r) => r.name));
  });

  it('answers a page of more than one loading round of light sessions whole', async () => {
    const user = await t.storage.db.selectFrom('users').select('id').where('handle', '=', 'bob').executeTakeFirstOrThrow();
    const rows = Array.from({ length: 250 }, (_, i) => sessionRow(`light ${String(i).padStart(3, '0')}`, user.id, { schedule: '2032-01-01' }));
    await t.storage.db.insertInto('sessions').values(rows).execute();
    const page = await t.bob.get('/api/v1/sessions?keyword=light&limit=500');
    expect(page.status).toBe(200);
    expect(page.body.data.map((s: SessionRecord) => s.name)).toEqual(rows.map((r) => r.name));
    expect(page.body.next_cursor).toBeNull();
    const dated = await t.bob.get('/api/v1/sessions?keyword=light&limit=500&day_start=2032-01-01&day_ends=2032-01-01');
    expect(dated.body.data).toHaveLength(250);
    expect(dated.body.next_cursor).toBeNull();
  });

  it('lists sessions stored before the occurrence index the same before and after the indexer ran', async () => {
    const user = await t.storage.db.selectFrom('users').select('id').where('handle', '=', 'alice').executeTakeFirstOrThrow();
    await t.storage.db
      .insertInto('sessions')
      .values([
        sessionRow('legacy one-off', user.id, { schedule: '2027-03-03', starts_at: '2027-03-03T09:00:00.000Z', ends_at: '2027-03-03T09:25:00.000Z' }),
        sessionRow('legacy series', user.id, {
          schedule: '2027-03-01',
          starts_at: '2027-03-01T09:00:00.000Z',
          ends_at: '2027-03-01T09:25:00.000Z',
          is_recurring: 1,
          occurrence: 'weekly',
          recurring_days: toJson([3]),
          recurring_ends: '2027-03-31',
        }),
      ])
      .execute();
    const query = 'keyword=legacy&day_start=2027-03-01&day_ends=2027-03-31';
    const before = items(await listAll(t.alice, query, 2));
    // Same instant: the one-off session, stored first, has the smaller id.
    expect(before).toEqual([
      'legacy one-off@2027-03-03', 'legacy series@2027-03-03', 'legacy series@2027-03-10', 'legacy series@2027-03-17',
      'legacy series@2027-03-24', 'legacy series@2027-03-31',
    ]);
    const undated = (await t.alice.get('/api/v1/sessions?keyword=legacy%20series')).body.data[0];
    expect(undated.rrule).toMatch(/^DTSTART:20270303T090000Z\nRRULE:FREQ=WEEKLY;BYDAY=WE/);
    const service = createSessionsService(t.storage);
    while ((await service.indexStep(100)) > 0);
    expect(items(await listAll(t.alice, query, 2))).toEqual(before);
    // Indexed, the series lists at its first occurrence, as new ones do.
    const indexed = (await t.alice.get('/api/v1/sessions?keyword=legacy%20series')).body.data[0];
    expect(indexed.starts_at).toBe('2027-03-03T09:00:00.000Z');
    const rows = await t.storage.db.selectFrom('session_occurrences').select((eb) => eb.fn.countAll<number>().as('n')).where('session_id', '=', indexed.id).executeTakeFirstOrThrow();
    expect(Number(rows.n)).toBe(5);
  });

  it("builds in one indexer step, for many sessions at once, the index each session's own writes built", async () => {
    // More occurrences than the indexer holds at once (20,000): the sessions after it are written in a later part.
    // Each began in 1970, so the index holds it from INDEX_PAST_DAYS ago (indexed_from).
    const longs = [];
    for (let n = 0; n < 45; n++) longs.push(await createSession(t.alice, { name: `batch long ${n}`, schedule: '1970-01-05', time: '6:00 AM', is_recurring: 1, occurrence: 'daily' }));
    const daily = await createSession(t.alice, { name: 'batch daily', is_public: true, schedule: '2026-08-03', is_recurring: 1, occurrence: 'daily', recurring_ends: '2026-08-20' });
    const open = await createSession(t.bob, {
      name: 'batch open',
      schedule: '2026-11-02',
      time: '7:30 PM',
      timezone: 'America/New_York',
      is_recurring: 1,
      occurrence: 'weekly',
      recurring_days: [1, 4],
    });
    const oneOff = await createSession(t.alice, { name: 'batch one-off', schedule: '2026-09-09', time: '11:15 PM', timezone: 'Pacific/Auckland' });
    const done = await createSession(t.bob, { name: 'batch done', schedule: '2026-07-01', is_recurring: 1, occurrence: 'daily', recurring_ends: '2026-07-05' });
    // The same days as the first series, none of them completed by its host.
    const other = await createSession(t.bob, { name: 'batch other', schedule: '2026-08-01', is_recurring: 1, occurrence: 'daily', recurring_ends: '2026-08-12' });
    // Removed occurrences and host completions, in more than one session of the step.
    expect((await t.alice.delete(`/api/v1/sessions/${daily.id}?scope=occurrence&date=2026-08-10`)).status).toBe(204);
    expect((await t.alice.post(`/api/v1/sessions/${daily.id}/complete?date=2026-08-05`)).status).toBe(200);
    expect((await t.bob.post(`/api/v1/sessions/${open.id}/complete?date=2026-11-05`)).status).toBe(200);
    expect((await t.bob.put(`/api/v1/sessions/${done.id}`, { status: 'completed' })).status).toBe(200);
    const longIds = longs.map((l) => l.id);
    const ids = [...longIds, daily.id, open.id, oneOff.id, done.id, other.id];
    const snapshot = async () => ({
      occurrences: await t.storage.db.selectFrom('session_occurrences').selectAll().where('session_id', 'in', ids).orderBy('session_id').orderBy('occurrence_date').execute(),
      sessions: await t.storage.db.selectFrom('sessions').select(['id', 'starts_at', 'ends_at', 'rrule', 'indexed_through', 'indexed_from']).where('id', 'in', ids).orderBy('id').execute(),
    });
    const written = await snapshot();
    expect(written.occurrences.filter((o) => longIds.includes(o.session_id)).length).toBeGreaterThan(20_000);
    expect(written.sessions.filter((r) => r.indexed_from !== null).map((r) => r.id)).toEqual(longIds);
    expect(written.occurrences.filter((o) => o.completed === 1).map((o) => `${o.session_id}@${o.occurrence_date}`)).toEqual([
      `${daily.id}@2026-08-05`,
      `${open.id}@2026-11-05`,
      ...['01', '02', '03', '04', '05'].map((d) => `${done.id}@2026-07-${d}`),
    ]);

    // Five as migration 0004 left sessions stored before the index; the open series as one the
    // indexer last extended ten days ago (due again: its horizon is within 30 days).
    const fresh = [...longIds, daily.id, oneOff.id, done.id, other.id];
    await t.storage.db.deleteFrom('session_occurrences').where('session_id', 'in', fresh).execute();
    await t.storage.db.updateTable('sessions').set({ indexed_through: null, indexed_from: null, rrule: null, starts_at: '2000-01-01T00:00:00.000Z', ends_at: '2000-01-01T00:00:00.000Z' }).where('id', 'in', fresh).execute();
    const earlier = new Date(Date.now() + 10 * 86_400_000).toISOString().slice(0, 10);
    await t.storage.db.deleteFrom('session_occurrences').where('session_id', '=', open.id).where('occurrence_date', '>', earlier).execute();
    await t.storage.db.updateTable('sessions').set({ indexed_through: earlier }).where('id', '=', open.id).execute();

    const service = createSessionsService(t.storage);
    while ((await service.indexStep(100)) > 0);
    expect(await snapshot()).toEqual(written);
  });

  it('expands a series without an end per request beyond what the index holds', async () => {
    const s = await createSession(t.bob, { name: 'open-ended', is_public: true, schedule: '2026-01-05', time: '10:00 AM', is_recurring: 1, occurrence: 'weekly' });
    const through = await t.storage.db.selectFrom('sessions').select('indexed_through').where('id', '=', s.id).executeTakeFirstOrThrow();
    expect(through.indexed_through).not.toBeNull();
    // Far past the index horizon: every Monday of March 2040, from expansion per request.
    const far = await listAll(t.alice, 'keyword=open-ended&day_start=2040-03-01&day_ends=2040-03-31', 2);
    expect(items(far)).toEqual(['open-ended@2040-03-05', 'open-ended@2040-03-12', 'open-ended@2040-03-19', 'open-ended@2040-03-26']);
    // Across the horizon: the indexed part and the expanded part meet without a gap or a repeat.
    const edge = String(through.indexed_through);
    const start = new Date(Date.parse(`${edge}T00:00:00Z`) - 20 * 86_400_000).toISOString().slice(0, 10);
    const end = new Date(Date.parse(`${edge}T00:00:00Z`) + 20 * 86_400_000).toISOString().slice(0, 10);
    const across = await listAll(t.alice, `keyword=open-ended&day_start=${start}&day_ends=${end}`, 1);
    const expected = (await t.alice.get(`/api/v1/sessions/${s.id}/occurrences?from=${start}&to=${end}`)).body.data.map(
      (o: { occurrence_date: string }) => `open-ended@${o.occurrence_date}`,
    );
    expect(items(across)).toEqual(expected);
    expect(expected.length).toBeGreaterThanOrEqual(5);
  });

  it(`holds a series that began long ago only ${INDEX_PAST_DAYS} days back, and expands older days per request`, async () => {
    const s = await createSession(t.alice, { name: 'ancient', is_public: true, schedule: '0001-01-01', time: '9:00 AM', timezone: 'UTC', is_recurring: 1, occurrence: 'daily' });
    expect(s.starts_at).toBe('0001-01-01T09:00:00.000Z');
    const stored = async () => ({
      rows: Number((await t.storage.db.selectFrom('session_occurrences').select((eb) => eb.fn.countAll<number>().as('n')).where('session_id', '=', s.id).executeTakeFirstOrThrow()).n),
      span: await t.storage.db.selectFrom('sessions').select(['indexed_from', 'indexed_through']).where('id', '=', s.id).executeTakeFirstOrThrow(),
    });
    const floor = addDays(utcToday(), -INDEX_PAST_DAYS);
    const written = await stored();
    expect(written.span.indexed_from).toBe(floor);
    expect(written.rows).toBe(INDEX_PAST_DAYS + INDEX_HORIZON_DAYS + 1);
    // A change that re-indexes the series writes no more.
    expect((await t.alice.put(`/api/v1/sessions/${s.id}`, { time: '10:00 AM' })).status).toBe(200);
    expect(await stored()).toEqual(written);

    // Days before the floor come from the pattern, the same as /occurrences gives them.
    expect(items((await t.bob.get('/api/v1/sessions?keyword=ancient&date=2000-06-15')).body.data)).toEqual(['ancient@2000-06-15']);
    const start = addDays(floor, -5);
    const end = addDays(floor, 5);
    const across = await listAll(t.bob, `keyword=ancient&day_start=${start}&day_ends=${end}`, 2);
    const expected = (await t.bob.get(`/api/v1/sessions/${s.id}/occurrences?from=${start}&to=${end}`)).body.data.map((o: { occurrence_date: string }) => `ancient@${o.occurrence_date}`);
    expect(expected).toHaveLength(11);
    expect(items(across)).toEqual(expected);
    expect(across.map((r) => r.starts_at)).toEqual(across.map((r) => `${r.occurrence_date}T10:00:00.000Z`));
    // Removed and completed occurrences before the floor, per request too.
    expect((await t.alice.delete(`/api/v1/sessions/${s.id}?scope=occurrence&date=2000-06-16`)).status).toBe(204);
    expect((await t.alice.post(`/api/v1/sessions/${s.id}/complete?date=2000-06-17`)).status).toBe(200);
    const old = 'keyword=ancient&day_start=2000-06-15&day_ends=2000-06-18';
    expect(items((await t.bob.get(`/api/v1/sessions?${old}`)).body.data)).toEqual(['ancient@2000-06-15', 'ancient@2000-06-17', 'ancient@2000-06-18']);
    expect(items((await t.bob.get(`/api/v1/sessions?${old}&completed=1`)).body.data)).toEqual(['ancient@2000-06-17']);
    // A listing after the floor reads the index alone: the series is listed once a day.
    const recent = await listAll(t.bob, `keyword=ancient&day_start=${utcToday()}&day_ends=${addDays(utcToday(), 3)}`, 50);
    expect(items(recent)).toHaveLength(4);
  });

  it('keeps the index in step with completion: completed=1 lists the host-completed occurrence only', async () => {
    const s = await createSession(t.alice, { name: 'per-day', is_public: true, schedule: '2026-08-03', is_recurring: 1, occurrence: 'daily', recurring_ends: '2026-08-07' });
    expect((await t.alice.post(`/api/v1/sessions/${s.id}/complete?date=2026-08-05`)).status).toBe(200);
    const query = 'keyword=per-day&day_start=2026-08-01&day_ends=2026-08-31';
    expect(items((await t.bob.get(`/api/v1/sessions?${query}&completed=1`)).body.data)).toEqual(['per-day@2026-08-05']);
    expect(items((await t.bob.get(`/api/v1/sessions?${query}&completed=0`)).body.data)).toHaveLength(4);
    const stored = await t.storage.db.selectFrom('session_occurrences').select(['occurrence_date', 'completed']).where('session_id', '=', s.id).execute();
    expect(stored.filter((r) => r.completed === 1).map((r) => r.occurrence_date)).toEqual(['2026-08-05']);
    // Moving the series keeps the host's completion of that day.
    expect((await t.alice.put(`/api/v1/sessions/${s.id}`, { time: '3:00 PM' })).status).toBe(200);
    expect(items((await t.bob.get(`/api/v1/sessions?${query}&completed=1`)).body.data)).toEqual(['per-day@2026-08-05']);
  });
});
