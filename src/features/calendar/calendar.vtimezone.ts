import { IANAZone } from 'luxon';

/*
 * VTIMEZONE components made from the runtime's own time-zone database (through luxon, as
 * the recurrence engine resolves local times), so that a calendar app reading the feed
 * puts every occurrence at the instant the API lists. Packaged VTIMEZONE sets were
 * considered and rejected: the one ical-generator suggests (@touch4it/ical-timezones)
 * ships 2018 data (Mexico City still with DST, abolished in 2022).
 *
 * Form: every offset change from the earliest year a feed needs through next year is an
 * observance of its own (exact whatever the rules were), and the changes of the last year
 * are written as yearly rules (`RRULE:FREQ=YEARLY;BYMONTH=…;BYDAY=…`) when the year before
 * followed the same rules, so that open-ended series stay right in the years after.
 */

const MINUTE = 60_000;
const DAY = 86_400_000;
/** How far back a VTIMEZONE goes at most: an older occurrence is read with the oldest offset written. */
export const VTIMEZONE_PAST_YEARS = 30;
const WEEKDAYS = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'] as const;

interface Transition {
  /** The first instant (epoch ms) of the new offset. */
  at: number;
  /** Offsets in minutes east of UTC. */
  from: number;
  to: number;
}

function transitionsBetween(zone: IANAZone, start: number, end: number): Transition[] {
  const out: Transition[] = [];
  let before = zone.offset(start);
  for (let t = start + DAY; t <= end; t += DAY) {
    const now = zone.offset(t);
    if (now === before) continue;
    // Offsets change on a minute: bisect the day down to it.
    let lo = (t - DAY) / MINUTE;
    let hi = t / MINUTE;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (zone.offset(mid * MINUTE) === before) lo = mid;
      else hi = mid;
    }
    out.push({ at: hi * MINUTE, from: before, to: now });
    before = now;
  }
  return out;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `YYYYMMDDTHHMMSS` of the wall clock `offset` minutes east of UTC at instant `ms`. */
function wallText(ms: number, offset: number): string {
  const d = new Date(ms + offset * MINUTE);
  return `${pad(d.getUTCFullYear(), 4)}${pad(d.getUTCMonth() + 1)}${pad(d.getUTCDate())}T${pad(d.getUTCHours())}${pad(d.getUTCMinutes())}${pad(d.getUTCSeconds())}`;
}

const offsetText = (minutes: number) => `${minutes < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(minutes) / 60))}${pad(Math.abs(minutes) % 60)}`;

/** The yearly rule a change follows, as `BYMONTH=…;BYDAY=…` with its wall time and offsets, to compare years. */
function yearlyRule(t: Transition): { rule: string; key: string } {
  const wall = new Date(t.at + t.from * MINUTE);
  const day = wall.getUTCDate();
  const daysInMonth = new Date(Date.UTC(wall.getUTCFullYear(), wall.getUTCMonth() + 1, 0)).getUTCDate();
  const nth = day + 7 > daysInMonth ? -1 : Math.ceil(day / 7);
  const rule = `FREQ=YEARLY;BYMONTH=${wall.getUTCMonth() + 1};BYDAY=${nth}${WEEKDAYS[wall.getUTCDay()] ?? 'SU'}`;
  return { rule, key: `${rule}|${wall.getUTCHours()}:${wall.getUTCMinutes()}|${t.from}|${t.to}` };
}

function observance(t: Transition, rrule?: string): string[] {
  return [
    `BEGIN:${t.to > t.from ? 'DAYLIGHT' : 'STANDARD'}`,
    `DTSTART:${wallText(t.at, t.from)}`,
    ...(rrule === undefined ? [] : [`RRULE:${rrule}`]),
    `TZOFFSETFROM:${offsetText(t.from)}`,
    `TZOFFSETTO:${offsetText(t.to)}`,
    `END:${t.to > t.from ? 'DAYLIGHT' : 'STANDARD'}`,
  ];
}

const cache = new Map<string, string | null>();

/**
 * The VTIMEZONE of `timezone` covering `fromYear` (clamped to the last
 * VTIMEZONE_PAST_YEARS) onwards, lines joined by CRLF; null for a zone the runtime does
 * not know. Cached: a pure function of its arguments and the year.
 */
export function vtimezone(timezone: string, fromYear: number, now = new Date()): string | null {
  const thisYear = now.getUTCFullYear();
  const first = Math.min(Math.max(fromYear, thisYear - VTIMEZONE_PAST_YEARS), thisYear);
  const last = thisYear + 1;
  const key = `${timezone}|${first}|${last}`;
  const known = cache.get(key);
  if (known !== undefined) return known;
  const zone = IANAZone.create(timezone);
  let text: string | null = null;
  if (zone.isValid) {
    const start = Date.UTC(first, 0, 1);
    const all = transitionsBetween(zone, start, Date.UTC(last + 1, 0, 1));
    const inYear = (y: number) => all.filter((t) => new Date(t.at).getUTCFullYear() === y);
    const lastYear = inYear(last);
    const yearBefore = inYear(last - 1).map((t) => yearlyRule(t).key);
    const ruled = lastYear.length > 0 && lastYear.length === yearBefore.length && lastYear.every((t, i) => yearlyRule(t).key === yearBefore[i]);
    const initial = zone.offset(start);
    const lines = [
      'BEGIN:VTIMEZONE',
      `TZID:${timezone}`,
      ...observance({ at: start, from: initial, to: initial }),
      ...all.flatMap((t) => (ruled && lastYear.includes(t) ? observance(t, yearlyRule(t).rule) : observance(t))),
      'END:VTIMEZONE',
    ];
    text = lines.join('\r\n');
  }
  if (cache.size >= 1000) cache.clear();
  cache.set(key, text);
  return text;
}
