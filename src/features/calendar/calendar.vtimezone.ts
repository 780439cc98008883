import { setImmediate as nextTurn } from 'node:timers/promises';
import { IANAZone } from 'luxon';

/*
 * VTIMEZONE components made from the runtime's own time-zone database (the one luxon and
 * the recurrence engine resolve local times with), so that a calendar app reading the feed
 * puts every occurrence at the instant the API lists. Packaged VTIMEZONE sets were
 * considered and rejected: the one ical-generator suggests (@touch4it/ical-timezones)
 * ships 2018 data (Mexico City still with DST, abolished in 2022).
 *
 * Form: every offset change from the earliest year a feed needs through next year is an
 * observance of its own (exact whatever the rules were), and the changes of the last year
 * are written as yearly rules (`RRULE:FREQ=YEARLY;BYMONTH=…;BYDAY=…`) when the year before
 * followed the same rules, so that open-ended series stay right in the years after.
 *
 * Cost: a zone's changes over the whole span are found once per process and year (probes
 * PROBE_STEP apart, each change bisected to its minute: about 3,000 probes, a few ms) and
 * kept with their observance text; a feed only slices and joins them. prepareZones does
 * the first computations a turn of the event loop each, so a feed full of zones never
 * holds other requests.
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
/** Zones kept at most (the runtime knows about 600 names, aliases included). */
const MAX_ZONES = 1024;
/** Probes between pauses of a computation: well under a millisecond each on an idle machine. */
const SLICE_PROBES = 200;
const WEEKDAYS = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'] as const;

interface Transition {
  /** The first instant (epoch ms) of the new offset. */
  at: number;
  /** Offsets in minutes east of UTC. */
  from: number;
  to: number;
}

/** Offsets through one formatter per zone: Intl's `longOffset` text is several times cheaper than luxon's offset(). */
function offsetReader(timezone: string): (ms: number) => number {
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
 * caller may give the event loop a turn (prepareZones) or run it to the end (vtimezone).
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

function observance(t: Transition, rrule?: string): string {
  const kind = t.to > t.from ? 'DAYLIGHT' : 'STANDARD';
  const rule = rrule === undefined ? '' : `RRULE:${rrule}\r\n`;
  return `BEGIN:${kind}\r\nDTSTART:${wallText(t.at, t.from)}\r\n${rule}TZOFFSETFROM:${offsetText(t.from)}\r\nTZOFFSETTO:${offsetText(t.to)}\r\nEND:${kind}`;
}

/** A zone's changes over the whole span, each with its observance text; null for a zone the runtime does not know. */
interface ZoneDefinition {
  thisYear: number;
  offset: (ms: number) => number;
  /** Offset at the span's start, before any change listed. */
  base: number;
  changes: Transition[];
  observances: string[];
}

const zones = new Map<string, ZoneDefinition | null>();

function* computeZone(timezone: string, thisYear: number): Generator<void, ZoneDefinition | null> {
  if (!IANAZone.isValidZone(timezone)) return null;
  const offset = offsetReader(timezone);
  const start = Date.UTC(thisYear - VTIMEZONE_PAST_YEARS, 0, 1);
  const last = thisYear + 1;
  const changes = yield* transitionsBetween(offset, start, Date.UTC(last + 1, 0, 1));
  const inYear = (y: number) => changes.filter((t) => new Date(t.at).getUTCFullYear() === y);
  const lastYear = inYear(last);
  const yearBefore = inYear(last - 1).map((t) => yearlyRule(t).key);
  const ruled = lastYear.length > 0 && lastYear.length === yearBefore.length && lastYear.every((t, i) => yearlyRule(t).key === yearBefore[i]);
  const observances = changes.map((t) => (ruled && lastYear.includes(t) ? observance(t, yearlyRule(t).rule) : observance(t)));
  return { thisYear, offset, base: offset(start), changes, observances };
}

/** The zone's definition for `thisYear` when computed already. */
function known(timezone: string, thisYear: number): ZoneDefinition | null | undefined {
  const found = zones.get(timezone);
  return found === undefined || (found !== null && found.thisYear !== thisYear) ? undefined : found;
}

function keep(timezone: string, definition: ZoneDefinition | null): ZoneDefinition | null {
  zones.delete(timezone);
  // Bounded: the oldest goes first (zone names come from stored sessions).
  if (zones.size >= MAX_ZONES) zones.delete(zones.keys().next().value ?? '');
  zones.set(timezone, definition);
  return definition;
}

/** The zone's definition for `thisYear`, computed here and now when not known yet. */
function definitionOf(timezone: string, thisYear: number): ZoneDefinition | null {
  const found = known(timezone, thisYear);
  if (found !== undefined) return found;
  const steps = computeZone(timezone, thisYear);
  for (;;) {
    const step = steps.next();
    if (step.done === true) return keep(timezone, step.value);
  }
}

/**
 * Computes the definitions of the zones not known yet a slice at a time, giving the event
 * loop a turn between slices: a feed naming hundreds of new zones waits for them, nobody else does.
 */
export async function prepareZones(timezones: Iterable<string>, now = new Date()): Promise<void> {
  const thisYear = now.getUTCFullYear();
  for (const timezone of new Set(timezones)) {
    if (known(timezone, thisYear) !== undefined) continue;
    const steps = computeZone(timezone, thisYear);
    for (;;) {
      const step = steps.next();
      if (step.done === true) {
        // Another feed may have computed it meanwhile: either result is the same.
        keep(timezone, step.value);
        break;
      }
      await nextTurn();
    }
  }
}

/**
 * The offset (minutes east of UTC) of `timezone` at `ms`: from the zone's computed changes
 * inside their span (no Intl call), through the runtime outside it; 0 for an unknown zone.
 */
export function offsetAt(timezone: string, ms: number, now = new Date()): number {
  const zone = definitionOf(timezone, now.getUTCFullYear());
  if (zone === null) return 0;
  const { changes } = zone;
  const spanStart = Date.UTC(zone.thisYear - VTIMEZONE_PAST_YEARS, 0, 1);
  if (ms < spanStart || ms >= Date.UTC(zone.thisYear + 2, 0, 1)) return zone.offset(ms);
  // The last change at or before `ms`, by bisection.
  let lo = -1;
  let hi = changes.length;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if ((changes[mid]?.at ?? Infinity) <= ms) lo = mid;
    else hi = mid;
  }
  return lo < 0 ? zone.base : (changes[lo]?.to ?? zone.base);
}

/**
 * The VTIMEZONE of `timezone` covering `fromYear` (clamped to the last
 * VTIMEZONE_PAST_YEARS) onwards, lines joined by CRLF; null for a zone the runtime does
 * not know. The zone's changes are computed once per process and year.
 */
export function vtimezone(timezone: string, fromYear: number, now = new Date()): string | null {
  const thisYear = now.getUTCFullYear();
  const zone = definitionOf(timezone, thisYear);
  if (zone === null) return null;
  const start = Date.UTC(Math.min(Math.max(fromYear, thisYear - VTIMEZONE_PAST_YEARS), thisYear), 0, 1);
  // Changes strictly after the start are listed; the one in force at the start opens the definition.
  let first = 0;
  while (first < zone.changes.length && (zone.changes[first]?.at ?? Infinity) <= start) first += 1;
  const initial = first === 0 ? zone.base : (zone.changes[first - 1]?.to ?? zone.base);
  return ['BEGIN:VTIMEZONE', `TZID:${timezone}`, observance({ at: start, from: initial, to: initial }), ...zone.observances.slice(first), 'END:VTIMEZONE'].join('\r\n');
}
