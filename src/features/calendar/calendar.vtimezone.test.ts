import ICAL from 'ical.js';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { offsetAt, vtimezone } from './calendar.vtimezone.js';

/*
 * The VTIMEZONEs a feed carries, read by ical.js, must put every instant at the wall time
 * the server's own time-zone data gives (what the API's instants are computed with):
 * across DST in both hemispheres, half-hour and 45-minute offsets, zones that abolished
 * DST (Mexico City, 2022) and zones whose rules are not "nth weekday" (Tehran, Casablanca).
 */

const HOUR = 3_600_000;
/** Between offset changes (each probed every 15 minutes): 13 hours, prime to a day's 24, passes every hour of the day within two weeks. */
const STEP = 13 * HOUR;

function readBack(timezone: string, fromYear: number) {
  const text = vtimezone(timezone, fromYear);
  expect(text, timezone).not.toBeNull();
  return new ICAL.Timezone(new ICAL.Component(ICAL.parse(`BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//t//EN\r\n${text}\r\nEND:VCALENDAR`)).getFirstSubcomponent('vtimezone'));
}

/**
 * Every `step` from `fromMs`: the wall time the runtime gives, read back through the
 * VTIMEZONE by ical.js (local → UTC, what a calendar app does with `DTSTART;TZID=`), must
 * be the same instant. Wall times that exist twice (the hour a clock falls back) are left
 * out: they name two instants. (ical.js's own UTC → local conversion is approximate for
 * some hours around a change, whatever the VTIMEZONE, so it is not what is compared.)
 */
function mismatch(zone: ICAL.Timezone, timezone: string, ms: number): string | undefined {
  const wall = DateTime.fromMillis(ms, { zone: timezone });
  const wallAsUtc = ms + wall.offset * 60_000;
  const offsets = [DateTime.fromMillis(ms - 3 * HOUR, { zone: timezone }).offset, DateTime.fromMillis(ms + 3 * HOUR, { zone: timezone }).offset];
  const instants = new Set(offsets.map((o) => wallAsUtc - o * 60_000).filter((at) => DateTime.fromMillis(at, { zone: timezone }).offset * 60_000 === wallAsUtc - at));
  if (instants.size > 1) return undefined;
  const local = new ICAL.Time({ year: wall.year, month: wall.month, day: wall.day, hour: wall.hour, minute: wall.minute, second: 0, isDate: false }, zone);
  const got = local.toJSDate().getTime();
  return got === ms ? undefined : `${wall.toISO()}: read back as ${new Date(got).toISOString()}, not ${new Date(ms).toISOString()}`;
}

/**
 * Every `step` from `fromMs`, and every 15 minutes across each offset change: the wall
 * time the runtime gives, read back through the VTIMEZONE by ical.js (local → UTC, what a
 * calendar app does with `DTSTART;TZID=`), must be the same instant. Wall times that
 * exist twice (the hour a clock falls back) are left out: they name two instants. (ical.js's
 * own UTC → local conversion is approximate around a change whatever the VTIMEZONE, so it
 * is not what is compared.)
 */
function mismatches(zone: ICAL.Timezone, timezone: string, fromMs: number, toMs: number, stepMs: number): string[] {
  const out: string[] = [];
  let previous = DateTime.fromMillis(fromMs, { zone: timezone }).offset;
  for (let ms = fromMs; ms < toMs && out.length < 5; ms += stepMs) {
    const offset = DateTime.fromMillis(ms, { zone: timezone }).offset;
    const around = offset === previous ? [ms] : Array.from({ length: Math.ceil((stepMs + 2 * HOUR) / (15 * 60_000)) }, (_, i) => ms - stepMs - HOUR + i * 15 * 60_000);
    previous = offset;
    for (const at of around) {
      const found = mismatch(zone, timezone, at);
      if (found !== undefined) out.push(found);
    }
  }
  return out;
}

describe('VTIMEZONE from the runtime’s time-zone data', () => {
  const year = new Date().getUTCFullYear();
  const zones = [
    'Europe/Berlin', 'America/New_York', 'Australia/Sydney', 'America/Santiago', 'Pacific/Chatham', 'Australia/Lord_Howe', 'Asia/Kolkata',
    'America/St_Johns', 'Europe/Dublin', 'America/Mexico_City', 'Asia/Tehran', 'Africa/Casablanca', 'Pacific/Apia', 'Europe/Kyiv', 'Etc/GMT+5',
  ];

  it('agrees with the runtime from the earliest year asked for through next year', () => {
    for (const timezone of zones) {
      const zone = readBack(timezone, year - 1);
      expect(mismatches(zone, timezone, Date.UTC(year - 1, 0, 1), Date.UTC(year + 2, 0, 1), STEP), timezone).toEqual([]);
    }
  }, 60_000);

  it('keeps following rule-based zones in the years after, through their yearly rules', () => {
    for (const timezone of ['Europe/Berlin', 'America/New_York', 'Australia/Sydney', 'Pacific/Chatham', 'America/St_Johns', 'Europe/Dublin']) {
      const text = vtimezone(timezone, year) ?? '';
      expect(text, timezone).toContain('RRULE:FREQ=YEARLY;');
      expect(mismatches(readBack(timezone, year), timezone, Date.UTC(year + 2, 0, 1), Date.UTC(year + 10, 0, 1), STEP), timezone).toEqual([]);
    }
  }, 60_000);

  it('misses no offset, however short, in zones whose offsets lasted a few weeks or days since 1996', () => {
    // Changes are probed days apart; these zones held an offset 7 to 35 days (Brazil 2000, Argentina 2004, Ramadan suspensions).
    const short = ['America/Noronha', 'America/Recife', 'America/Boa_Vista', 'America/Argentina/Tucuman', 'Africa/Cairo', 'Asia/Hebron', 'Africa/Casablanca', 'Pacific/Fiji'];
    const wrong: string[] = [];
    for (const timezone of short) {
      const format = new Intl.DateTimeFormat('en-US', { timeZone: timezone, timeZoneName: 'longOffset' });
      // Daily: an offset held a day or more is seen (the shortest held 7).
      for (let ms = Date.UTC(1996, 0, 1) + 5 * HOUR; ms < Date.UTC(year + 2, 0, 1) && wrong.length < 5; ms += 24 * HOUR) {
        const [, sign = '+', hours = '0', minutes = '0'] = /GMT(?:([+-])(\d{2}):(\d{2}))?$/.exec(format.format(ms)) ?? [];
        const runtime = (sign === '-' ? -1 : 1) * (Number(hours) * 60 + Number(minutes));
        if (offsetAt(timezone, ms) !== runtime) wrong.push(`${timezone} ${new Date(ms).toISOString()}: ${offsetAt(timezone, ms)} != ${runtime}`);
      }
    }
    expect(wrong).toEqual([]);
  }, 60_000);

  it('is null for a zone the runtime does not know', () => {
    expect(vtimezone('Mars/Olympus_Mons', year)).toBeNull();
  });
});
