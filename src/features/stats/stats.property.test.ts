import fc from 'fast-check';
import { DateTime } from 'luxon';
import { expect, it } from 'vitest';
import { describeEachDialect, useTestApp } from '../../../test/helpers/harness.js';
import { propertySeed } from '../../../test/helpers/seed.js';
import { createSession } from '../sessions/sessions.test-helpers.js';

/*
 * Statistics over a generated history against a computation written here with luxon (not
 * the service's calendar code): sessions are created over HTTP; the participation rows and
 * task completions (whose instants the API cannot backdate) are written straight into the
 * database, and the statistics read over HTTP.
 */

const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Australia/Sydney', 'Pacific/Auckland', 'Asia/Kolkata', 'America/Los_Angeles'] as const;
/** Away from the zones' DST changes (1–3 AM), so that a local time means one instant. */
const TIMES = [
  ['12:15 AM', '00:15'],
  ['9:00 AM', '09:00'],
  ['11:30 PM', '23:30'],
] as const;
const DAYS = 70;
const day = (dt: DateTime) => dt.toISODate() as string;

interface Occ {
  id: number;
  zone: string;
  hhmm: string;
  duration: number;
  /** A one-off session's own day; undefined for a daily series. */
  schedule?: string;
}

const startOf = (o: Occ, date: string) => DateTime.fromISO(`${date}T${o.hhmm}`, { zone: o.zone }).toMillis();

interface History {
  zone: string;
  rows: { occ: number; offset: number; completed: boolean }[];
  tasks: number[];
  range: { from: number; length: number; group: 'day' | 'week' | 'month' };
}

/** What the statistics must be, computed the plain way: every day of the range visited. */
function expected(h: History, occs: readonly Occ[], base: DateTime, now: DateTime) {
  const zone = h.zone;
  const localDay = (ms: number) => day(DateTime.fromMillis(ms, { zone }));
  const from = base.plus({ days: h.range.from });
  const to = from.plus({ days: h.range.length });
  const startOfPeriod = (d: DateTime) => day(h.range.group === 'day' ? d : d.startOf(h.range.group));
  const buckets = new Map<string, { start: string; focused_minutes: number; sessions_completed: number; sessions_joined: number; tasks_completed: number }>();
  for (let d = from; d <= to; d = d.plus({ days: 1 })) {
    const start = startOfPeriod(d);
    if (!buckets.has(start)) buckets.set(start, { start, focused_minutes: 0, sessions_completed: 0, sessions_joined: 0, tasks_completed: 0 });
  }
  const inRange = (localDate: string) => localDate >= day(from) && localDate <= day(to);
  const bucketOf = (localDate: string) => buckets.get(startOfPeriod(DateTime.fromISO(localDate)));
  const completedDays = new Set<string>();
  for (const r of h.rows) {
    const o = occs[r.occ] as Occ;
    const local = localDay(startOf(o, o.schedule ?? day(base.plus({ days: r.offset }))));
    if (r.completed) completedDays.add(local);
    if (!inRange(local)) continue;
    const b = bucketOf(local);
    if (b === undefined) throw new Error(`no bucket for ${local}`);
    b.sessions_joined++;
    if (r.completed) {
      b.sessions_completed++;
      b.focused_minutes += o.duration;
    }
  }
  for (const ms of h.tasks) {
    const local = localDay(ms);
    if (inRange(local)) (bucketOf(local) as { tasks_completed: number }).tasks_completed++;
  }
  const list = [...buckets.values()];
  const totals = { focused_minutes: 0, sessions_completed: 0, sessions_joined: 0, tasks_completed: 0 };
  for (const b of list) for (const k of Object.keys(totals) as (keyof typeof totals)[]) totals[k] += b[k];
  const today = now.setZone(zone).startOf('day');
  let current = 0;
  for (let d = completedDays.has(day(today)) ? today : today.minus({ days: 1 }); completedDays.has(day(d)); d = d.minus({ days: 1 })) current++;
  let longest = 0;
  for (const d of completedDays) {
    let run = 0;
    for (let x = DateTime.fromISO(d); completedDays.has(day(x)); x = x.plus({ days: 1 })) run++;
    longest = Math.max(longest, run);
  }
  return { buckets: list, totals, current_streak_days: current, longest_streak_days: longest };
}

describeEachDialect('focus statistics against an independent computation', (dialect) => {
  const t = useTestApp(dialect, { pat: [1] });

  it('match for generated histories, zones with DST and every grouping', async () => {
    const now = DateTime.utc();
    // The generated days end yesterday (UTC), so streaks reach today and yesterday in some zones.
    const base = now.startOf('day').minus({ days: DAYS });
    const occs: Occ[] = [];
    for (const [i, zone] of ZONES.entries()) {
      const [time, hhmm] = TIMES[i % TIMES.length] as (typeof TIMES)[number];
      const duration = 15 + 10 * i;
      const series = await createSession(t.pat, { name: `series ${zone}`, schedule: '2025-06-01', time, timezone: zone, duration, is_recurring: 1, occurrence: 'daily' });
      occs.push({ id: series.id, zone, hhmm, duration });
      const schedule = day(base.plus({ days: 9 * i + 3 }));
      const [oneTime, oneHhmm] = TIMES[(i + 1) % TIMES.length] as (typeof TIMES)[number];
      const once = await createSession(t.pat, { name: `once ${zone}`, schedule, time: oneTime, timezone: zone, duration: 50 });
      occs.push({ id: once.id, zone, hhmm: oneHhmm, duration: 50, schedule });
    }
    const userId = Number((await t.storage.db.selectFrom('users').select('id').where('handle', '=', 'pat').executeTakeFirstOrThrow()).id);
    const taskSession = occs[0]?.id as number;

    const history = fc.record({
      zone: fc.constantFrom(...ZONES),
      rows: fc.uniqueArray(fc.record({ occ: fc.nat({ max: occs.length - 1 }), offset: fc.nat({ max: DAYS - 1 }), completed: fc.boolean() }), {
        maxLength: 40,
        selector: (r) => (occs[r.occ]?.schedule === undefined ? `${r.occ}|${r.offset}` : `${r.occ}`),
      }),
      tasks: fc.array(fc.integer({ min: base.minus({ days: 3 }).toMillis(), max: now.toMillis() }), { maxLength: 15 }),
      range: fc.record({ from: fc.integer({ min: -5, max: DAYS }), length: fc.nat({ max: 75 }), group: fc.constantFrom('day' as const, 'week' as const, 'month' as const) }),
    });

    await fc.assert(
      fc.asyncProperty(history, async (h) => {
        const db = t.storage.db;
        await db.deleteFrom('session_participants').where('user_id', '=', userId).execute();
        await db.deleteFrom('tasks').where('owner_id', '=', userId).execute();
        expect((await t.pat.put('/api/v1/me', { timezone: h.zone })).status).toBe(200);
        const stamp = now.toISO();
        if (h.rows.length > 0) {
          await db
            .insertInto('session_participants')
            .values(
              h.rows.map((r) => {
                const o = occs[r.occ] as Occ;
                return { session_id: o.id, user_id: userId, occurrence_date: o.schedule === undefined ? day(base.plus({ days: r.offset })) : '', joined_at: stamp, completed_at: r.completed ? stamp : null };
              }),
            )
            .execute();
        }
        for (const [i, ms] of h.tasks.entries()) {
          const at = new Date(ms).toISOString();
          await db.insertInto('tasks').values({ owner_id: userId, context: `task ${i}`, is_completed: 1, source: null, source_id: null, source_id_type: null, session_id: taskSession, created_at: at, updated_at: at, completed_at: at }).execute();
        }
        const from = day(base.plus({ days: h.range.from }));
        const to = day(base.plus({ days: h.range.from + h.range.length }));
        const res = await t.pat.get(`/api/v1/me/stats?from=${from}&to=${to}&group=${h.range.group}`);
        expect(res.status, res.text).toBe(200);
        expect(res.body.data).toEqual(expected(h, occs, base, DateTime.utc()));
      }),
      { numRuns: dialect === 'sqlite' ? 40 : 20, seed: propertySeed() },
    );
  });
});
