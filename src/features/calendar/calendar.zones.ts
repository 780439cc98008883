import { IANAZone } from 'luxon';

/*
 * A zone's offset changes and their VTIMEZONE observances, computed from the runtime's own
 * time-zone data (the one luxon and the recurrence engine resolve local times with). Pure:
 * the zones worker (calendar.zones-worker.ts) runs it off the event loop, and
 * calendar.vtimezone.ts runs it a slice at a time should the worker be unavailable.
 *
 * Form: every offset change from VTIMEZONE_PAST_YEARS before this year through next year
 * is an observance of its own (exact whatever the rules were), and the changes of the last
 * year are written as yearly rules (`RRULE:FREQ=YEARLY;BYMONTH=…;BYDAY=…`) when the year
 * before followed the same rules, so that open-ended series stay right in the years after.
 * Cost: probes PROBE_STEP apart, each change bisected to its minute: about 3,000 probes,
 * 3–10 ms a zone (2.4 s for the runtime's 418 zones on an idle core).
 */

const MINUTE = 60_000;
const DAY = 86_400_000;
/** How far back a VTIMEZONE goes at most: an older occurrence is read with the oldest offset written. */
export const VTIMEZONE_PAST_YEARS = 30;
/**
 * Probes this far apart see every offset that lasted longer: the shortest one in the
 * time-zone data since 1996 lasted 7 days (Brazil's Noronha, Recife, Boa Vista in October 2000).
 */
const PROBE_STEP = 4 * DAY;
/** Probes between pauses of a computation: well under a millisecond each on an idle machine. */
const SLICE_PROBES = 200;
const WEEKDAYS = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'] as const;

export interface Transition {
  /** The first instant (epoch ms) of the new offset. */
  at: number;
  /** Offsets in minutes east of UTC. */
  from: number;
  to: number;
}

/**
 * A zone's changes over the span (VTIMEZONE_PAST_YEARS before `thisYear` through next
 * year), each with its observance text; `valid: false` for a zone the runtime does not
 * know. Plain data: it crosses from the worker by structured clone.
 */
export interface ZoneDefinition {
  timezone: string;
  valid: boolean;
  thisYear: number;
  /** Offset at the span's start, before any change listed. */
  base: number;
  changes: Transition[];
  observances: string[];
}

/** Offsets through one formatter per zone: Intl's `longOffset` text is several times cheaper than luxon's offset(). */
export function offsetReader(timezone: string): (ms: number) => number {
  const format = new Intl.DateTimeFormat('en-US', { timeZone: timezone, timeZoneName: 'longOffset' });
  return (ms) => {
    const m = /GMT(?:([+-])(\d{2}):(\d{2}))?$/.exec(format.format(ms));
    if (m === null || m[1] === undefined) return 0;
    return (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3]));
  };
}

/**
 * The offset changes in (start, end], found by probing PROBE_STEP apart and bisecting each
 * change to its minute. A generator: it pauses about every SLICE_PROBES probes, so that a
 * caller on the event loop may give it a turn in between.
 */
function* transitionsBetween(offset: (ms: number) => number, start: number, end: number): Generator<void, Transition[]> {
  const out: Transition[] = [];
  let before = offset(start);
  let at = start;
  let probes = 0;
  while (at < end) {
    if (++probes % SLICE_PROBES === 0) yield;
    const next = Math.min(at + PROBE_STEP, end);
    if (offset(next) === before) {
      at = next;
      continue;
    }
    // Offsets change on a minute: bisect down to the first minute of the change, then go on from there.
    let lo = at / MINUTE;
    let hi = next / MINUTE;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (offset(mid * MINUTE) === before) lo = mid;
      else hi = mid;
    }
    const to = offset(hi * MINUTE);
    out.push({ at: hi * MINUTE, from: before, to });
    before = to;
    at = hi * MINUTE;
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

export function observance(t: Transition, rrule?: string): string {
  const kind = t.to > t.from ? 'DAYLIGHT' : 'STANDARD';
  const rule = rrule === undefined ? '' : `RRULE:${rrule}\r\n`;
  return `BEGIN:${kind}\r\nDTSTART:${wallText(t.at, t.from)}\r\n${rule}TZOFFSETFROM:${offsetText(t.from)}\r\nTZOFFSETTO:${offsetText(t.to)}\r\nEND:${kind}`;
}

/** The first instant of the span a definition for `thisYear` covers, and the first instant after it. */
export const spanOf = (thisYear: number) => ({ start: Date.UTC(thisYear - VTIMEZONE_PAST_YEARS, 0, 1), end: Date.UTC(thisYear + 2, 0, 1) });

/** A zone's definition for `thisYear`, pausing as transitionsBetween does. */
export function* computeZone(timezone: string, thisYear: number): Generator<void, ZoneDefinition> {
  if (!IANAZone.isValidZone(timezone)) return { timezone, valid: false, thisYear, base: 0, changes: [], observances: [] };
  const offset = offsetReader(timezone);
  const { start, end } = spanOf(thisYear);
  const last = thisYear + 1;
  const changes = yield* transitionsBetween(offset, start, end);
  const inYear = (y: number) => changes.filter((t) => new Date(t.at).getUTCFullYear() === y);
  const lastYear = inYear(last);
  const yearBefore = inYear(last - 1).map((t) => yearlyRule(t).key);
  const ruled = lastYear.length > 0 && lastYear.length === yearBefore.length && lastYear.every((t, i) => yearlyRule(t).key === yearBefore[i]);
  const observances = changes.map((t) => (ruled && lastYear.includes(t) ? observance(t, yearlyRule(t).rule) : observance(t)));
  return { timezone, valid: true, thisYear, base: offset(start), changes, observances };
}

/** Runs a computation to its end without pausing: in the worker, or where the caller accepts the cost. */
export function computeZoneNow(timezone: string, thisYear: number): ZoneDefinition {
  const steps = computeZone(timezone, thisYear);
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
  }
}
