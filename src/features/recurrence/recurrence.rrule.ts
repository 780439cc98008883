/**
 * Export a recurrence pattern as RFC 5545 text (for calendar feeds and
 * clients that speak iCalendar recurrence).
 *
 * Form chosen: the multi-line "recurrence set" form that rrule.js's
 * `rrulestr`, python-dateutil and iCalendar properties all understand:
 *
 *   DTSTART;TZID=Europe/Berlin:20260105T090000
 *   RRULE:FREQ=WEEKLY;BYDAY=MO,WE;UNTIL=20260330T090000Z
 *   EXDATE;TZID=Europe/Berlin:20260112T090000,20260114T090000
 *
 * A bare `RRULE:` line is not enough: it cannot carry the zone the wall
 * clock lives in, the start, or the deleted occurrences. Lines are joined
 * with "\n" and are not folded at 75 octets; whoever embeds them in an .ics
 * file folds them (and uses CRLF) as part of writing that file.
 *
 * Decisions, each so that the text means exactly the engine's dates:
 *
 * - DTSTART is the first date the rule really produces (RFC 5545 counts
 *   DTSTART as an instance even when the rule would not match it, so it must
 *   be "synchronized"). Its time is the session's local wall time, with
 *   TZID; for "UTC" it is written as a UTC time (`...Z`) instead.
 * - UNTIL: with a TZID DTSTART the RFC requires a UTC date-time. Any instant
 *   from the last day's occurrence up to (excluding) the next day's works; we
 *   write the later of (a) the true UTC instant of the occurrence on the
 *   `ends` date and (b) that occurrence's wall-clock time read as UTC. (a)
 *   alone is RFC-correct, but rrule.js 2.8 compares UNTIL against wall-clock
 *   times, and with (b) mixed in it agrees too: the value is ≥ both readings
 *   of the last occurrence and, offsets being under 24 h, < both readings of
 *   the next day's. The property tests check this across zones.
 * - Monthly "exact" with fallback 1 on the 29th–31st is
 *   `BYMONTHDAY=<d>,-1;BYSETPOS=1`: the month's candidates are the d-th (if it
 *   exists) and the last day; the first of them is the d-th when it exists and
 *   the last day otherwise. (`BYMONTHDAY=-1` alone would wrongly give the 31st
 *   for a 30th-of-month series.) Fallback 0 is plain `BYMONTHDAY=<d>`: the RFC
 *   ignores invalid dates, i.e. skips the month.
 * - EXDATE lists only exceptions that the rule would otherwise produce, with
 *   the same wall time and TZID as DTSTART (the RFC matches EXDATEs against
 *   instances by value, so a gap-day exception resolves like its instance).
 * - A pattern that produces nothing is written as DTSTART + `COUNT=1` + an
 *   EXDATE of DTSTART: unambiguous, whatever the reader does with UNTIL.
 */
import { daysFromCivil, isRealDate, requireDate } from './recurrence.dates.js';
import { isOccurrence, resolveRule, ruleDatesFrom } from './recurrence.engine.js';
import type { RecurrencePattern, ResolvedRule } from './recurrence.engine.js';
import { isValidTimeZone, localToEpochMillis } from './recurrence.time.js';

export interface LocalStart {
  /** The date the export begins at: normally `p.start`; a later date exports only the rest of the series. */
  date: string;
  /** Minutes after local midnight, 0..1439. */
  minutes: number;
  /** IANA zone name. */
  timezone: string;
}

const BYDAY = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'] as const;

function byDay(weekDay: number): string {
  const code = BYDAY[weekDay];
  if (code === undefined) throw new RangeError(`weekday must be 0..6, got ${weekDay}`);
  return code;
}

/** The FREQ and BY* parts, without UNTIL. */
function ruleParts(rule: ResolvedRule): string[] {
  switch (rule.kind) {
    case 'daily':
      return ['FREQ=DAILY'];
    case 'weekly':
      return ['FREQ=WEEKLY', `BYDAY=${rule.days.map(byDay).join(',')}`];
    case 'monthly-exact':
      if (rule.day >= 29 && rule.fallback === 1) return ['FREQ=MONTHLY', `BYMONTHDAY=${rule.day},-1`, 'BYSETPOS=1'];
      return ['FREQ=MONTHLY', `BYMONTHDAY=${rule.day}`];
    case 'monthly-weekday':
      return ['FREQ=MONTHLY', `BYDAY=${rule.pos}${byDay(rule.weekDay)}`];
  }
}

/** `YYYYMMDDTHHMMSS` of a local date + minutes. */
function localDateTime(date: string, minutes: number): string {
  const hh = String(Math.floor(minutes / 60)).padStart(2, '0');
  const mm = String(minutes % 60).padStart(2, '0');
  return `${date.replaceAll('-', '')}T${hh}${mm}00`;
}

/** `YYYYMMDDTHHMMSSZ` of an epoch-millisecond instant. */
function utcDateTime(ms: number): string {
  return new Date(ms).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}Z$/, 'Z');
}

/** The local wall-clock time read as if it were UTC, in epoch ms. */
function wallAsUtc(date: string, minutes: number): number {
  const d = requireDate(date);
  return daysFromCivil(d.year, d.month, d.day) * 86_400_000 + minutes * 60_000;
}

export function toRRule(p: RecurrencePattern, dtstartLocal: LocalStart): string {
  const { date, minutes, timezone } = dtstartLocal;
  requireDate(date, 'dtstartLocal.date');
  if (!Number.isInteger(minutes) || minutes < 0 || minutes > 1439) {
    throw new RangeError(`dtstartLocal.minutes must be an integer 0..1439, got ${minutes}`);
  }
  if (!isValidTimeZone(timezone)) throw new RangeError(`not a valid IANA time zone: ${JSON.stringify(timezone)}`);

  const isUtc = timezone === 'UTC';
  // One value formatter for DTSTART and EXDATE so they always match each other.
  const valueOf = (day: string): string =>
    isUtc ? utcDateTime(wallAsUtc(day, minutes)) : localDateTime(day, minutes);
  const property = (name: string, values: readonly string[]): string =>
    `${name}${isUtc ? '' : `;TZID=${timezone}`}:${values.join(',')}`;

  const rule = resolveRule(p);
  const from = date > p.start ? date : p.start;
  const first = ruleDatesFrom(p, from).next();
  if (first.done === true) {
    // Nothing to export: one instance (DTSTART itself), removed again.
    const only = valueOf(from);
    return [property('DTSTART', [only]), 'RRULE:FREQ=DAILY;COUNT=1', property('EXDATE', [only])].join('\n');
  }
  const dtstart = first.value;

  const parts = ruleParts(rule);
  if (p.ends !== null) parts.push(`UNTIL=${utcDateTime(untilInstant(p.ends, minutes, timezone))}`);
  const lines = [property('DTSTART', [valueOf(dtstart)]), `RRULE:${parts.join(';')}`];

  const exdates = exportedExceptions(p, dtstart);
  if (exdates.length > 0) lines.push(property('EXDATE', exdates.map(valueOf)));
  return lines.join('\n');
}

/** See "UNTIL" in the module comment. */
function untilInstant(ends: string, minutes: number, timezone: string): number {
  return Math.max(localToEpochMillis(ends, minutes, timezone), wallAsUtc(ends, minutes));
}

/**
 * Exceptions that remove a real instance at or after `dtstart`, ascending.
 * Exceptions come from storage, so malformed ones are dropped rather than
 * failing the whole export.
 */
function exportedExceptions(p: RecurrencePattern, dtstart: string): string[] {
  if (!p.exceptions || p.exceptions.size === 0) return [];
  const withoutExceptions: RecurrencePattern = { ...p, exceptions: undefined };
  return [...p.exceptions]
    .filter((d) => d >= dtstart && isRealDate(d) && isOccurrence(withoutExceptions, d))
    .sort();
}

