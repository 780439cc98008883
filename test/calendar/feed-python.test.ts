import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { type Client, describeEachDialect, useTestApp } from '../helpers/harness.js';
import { createSession } from '../../src/features/sessions/sessions.test-helpers.js';
import { parseFeed } from '../../src/features/calendar/calendar.test-helpers.js';

/*
 * Contract section 10, "Calendar feed content": the end of a series is written so that
 * python's `recurring-ical-events` (Debian's python3-recurring-ical-events; .ci/run installs
 * it) expands the same days as Mozilla's ical.js, and both the API's: across DST changes,
 * with removed occurrences, in zones east and west of UTC and in UTC; and occurrences edited
 * alone (RECURRENCE-ID exceptions) at the instants the API gives them.
 */

const SCRIPT = fileURLToPath(new URL('./expand-feed.py', import.meta.url));
// Debian's module is installed for Debian's python, which a PATH python (pyenv, venv) may not see.
const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
const FROM = '2026-01-01';
const TO = '2027-12-31';

/** Days per UID as python expands the feed, or null (said aloud) when the module is missing. */
function pythonDays(ics: string, instants = false): Record<string, string[]> | null {
  const run = spawnSync(PYTHON, [SCRIPT, FROM, TO, ...(instants ? ['instants'] : [])], { input: ics, encoding: 'utf8', timeout: 60_000 });
  if (run.status === 3 || run.error !== undefined) {
    console.warn(`SKIPPED: python's recurring-ical-events is not installed (apt-get install -y python3-recurring-ical-events): ${run.stderr || String(run.error)}`);
    return null;
  }
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Record<string, string[]>;
}

async function removeDay(client: Client, id: number, date: string) {
  expect((await client.delete(`/api/v1/sessions/${id}?scope=occurrence&date=${date}`)).status).toBe(204);
}

describeEachDialect('calendar feed: python recurring-ical-events expands the days ical.js and the API do', (dialect) => {
  const t = useTestApp(dialect, { ada: [1] }, { PUBLIC_URL: 'https://focus.example.com' });

  it('daily, weekly and monthly series ending across DST changes, with removed days', async () => {
    const series = [
      // Ends on the day Europe moves to summer time; removed days before and after the change.
      { name: 'Berlin daily', timezone: 'Europe/Berlin', schedule: '2026-03-20', time: '09:00', occurrence: 'daily', recurring_ends: '2026-03-29', removed: ['2026-03-24', '2026-03-28'] },
      // West of UTC, late in the evening: UTC is already the next day; ends after the autumn change.
      { name: 'NY evening', timezone: 'America/New_York', schedule: '2026-10-26', time: '23:30', occurrence: 'daily', recurring_ends: '2026-11-03', removed: ['2026-11-01'] },
      { name: 'NY weekly', timezone: 'America/New_York', schedule: '2026-02-23', time: '6:30 PM', occurrence: 'weekly', recurring_days: [1, 3, 5], recurring_ends: '2026-11-20', removed: ['2026-03-09', '2026-11-02'] },
      // East of UTC, early morning: UTC is still the day before; ends after Sydney's April change.
      { name: 'Sydney early', timezone: 'Australia/Sydney', schedule: '2026-03-30', time: '0:15', occurrence: 'daily', recurring_ends: '2026-04-10', removed: ['2026-04-05'] },
      { name: 'Month end', timezone: 'Europe/Berlin', schedule: '2026-01-31', time: '11:00 PM', occurrence: 'monthly', recurring_month_option: 'exact', fallback_option: 1, recurring_ends: '2026-10-31', removed: ['2026-03-31'] },
      { name: 'UTC daily', timezone: 'UTC', schedule: '2026-06-01', time: '21:30', occurrence: 'daily', recurring_ends: '2026-06-07', removed: ['2026-06-03'] },
      { name: 'Open-ended', timezone: 'Europe/Berlin', schedule: '2027-10-25', time: '02:30', occurrence: 'daily', removed: ['2027-10-31'] },
    ];
    const ids = new Map<string, number>();
    for (const { removed, ...fields } of series) {
      const s = await createSession(t.ada, { ...fields, is_recurring: 1, duration: 45 });
      for (const date of removed) await removeDay(t.ada, s.id, date);
      ids.set(`session-${s.id}@focus`, s.id);
    }
    const feed = await t.ada.post<{ data: { url: string } }>('/api/v1/calendar-feeds', {});
    const res = await t.ada.get(feed.body.data.url);
    expect(res.status).toBe(200);
    const ics = res.text;
    const python = pythonDays(ics);
    const { events } = parseFeed(ics);
    for (const [uid, id] of ids) {
      const apiDays: string[] = [];
      // A range covers at most 366 days: a year at a time.
      for (const year of ['2026', '2027']) {
        const api = await t.ada.get<{ data: { occurrence_date: string }[] }>(`/api/v1/sessions/${id}/occurrences?from=${year}-01-01&to=${year}-12-31`);
        expect(api.status, api.text).toBe(200);
        apiDays.push(...api.body.data.map((o) => o.occurrence_date));
      }
      const icalDays = events.get(uid)?.expand(FROM, TO).map((o) => o.occurrence_date);
      expect(icalDays, uid).toEqual(apiDays);
      if (python !== null) expect(python[uid] ?? [], uid).toEqual(apiDays);
    }
  });

  it('one-occurrence edits (moved, retimed, lengthened) across DST changes, at the API’s instants', async () => {
    const s = await createSession(t.ada, { name: 'Edited', timezone: 'Europe/Berlin', schedule: '2026-03-25', time: '09:00', occurrence: 'daily', is_recurring: 1, duration: 45, recurring_ends: '2026-04-05' });
    const edits = [
      { date: '2026-03-27', body: { schedule: '2026-03-30', time: '07:30' } },
      { date: '2026-03-29', body: { time: '22:15', duration: 90 } },
      { date: '2026-04-05', body: { schedule: '2026-03-26', duration: 20 } },
    ];
    for (const { date, body } of edits) expect((await t.ada.put(`/api/v1/sessions/${s.id}?date=${date}`, body)).status).toBe(200);
    await removeDay(t.ada, s.id, '2026-04-01');
    const feed = await t.ada.post<{ data: { url: string } }>('/api/v1/calendar-feeds', {});
    const ics = (await t.ada.get(feed.body.data.url)).text;
    const api = await t.ada.get<{ data: { starts_at: string; ends_at: string }[] }>(`/api/v1/sessions/${s.id}/occurrences?from=2026-03-01&to=2026-04-30`);
    const expected = api.body.data.map((o) => `${o.starts_at}/${o.ends_at}`).sort();
    expect(expected).toHaveLength(11);
    const python = pythonDays(ics, true);
    if (python !== null) expect((python[`session-${s.id}@focus`] ?? []).sort()).toEqual(expected);
  });
});
