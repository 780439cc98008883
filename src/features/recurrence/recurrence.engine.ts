/**
 * The recurrence engine: which LOCAL dates a recurring session occurs on.
 *
 * Pure and time-zone free: it answers "which calendar days", and
 * recurrence.time.ts turns a day plus a local time into UTC instants.
 *
 * Design: a pattern is compiled into a {@link DayRule} that can jump straight
 * to the first matching day on/after (or last on/before) any day in O(1)
 * (daily, monthly) or ≤ 7 steps (weekly). Every query therefore starts at the
 * query range, never at the series start, and costs O(days in range) at
 * worst, so a series that began decades ago is as cheap as a new one.
 */
import {
  MAX_DAY_NUMBER,
  daysFromCivil,
  fromDayNumber,
  requireDate,
  weekdayOfDayNumber,
} from './recurrence.dates.js';
import { type DayRule, type MonthOption, type Occurrence, type ResolvedRule, type WeekPosition, dayRuleFor } from './recurrence.rules.js';

export type { Occurrence, ResolvedRule, WeekPosition };

export interface RecurrencePattern {
  start: string; // first possible occurrence date (recurring_start ?? schedule)
  ends: string | null; // inclusive last date, null = open-ended
  occurrence: Occurrence;
  recurringDays: readonly number[];
  monthOption: MonthOption | null;
  weekPos: number | null; // 1..4 or -1
  weekDay: number | null; // 0..6
  fallback: number; // 0 skip, 1 last day
  exceptions?: ReadonlySet<string>;
}

/**
 * Validates the fields that matter for `p.occurrence` and fills in defaults.
 * Fields that belong to other occurrence kinds are ignored on purpose: a row
 * switched from monthly to daily may still carry stale monthly columns.
 * Throws RangeError for malformed input (the HTTP layer validates first, so
 * reaching this is a programming error, not user error).
 */
export function resolveRule(p: RecurrencePattern): ResolvedRule {
  const start = requireDate(p.start, 'start');
  switch (p.occurrence) {
    case 'daily':
      return { kind: 'daily' };
    case 'weekly': {
      for (const d of p.recurringDays) requireWeekday(d, 'recurringDays');
      const days = p.recurringDays.length > 0 ? p.recurringDays : [weekdayOfCivil(start)];
      return { kind: 'weekly', days: [...new Set(days)].sort((a, b) => a - b) };
    }
    case 'monthly': {
      if (p.monthOption === 'week_day') {
        const weekDay = p.weekDay ?? weekdayOfCivil(start);
        requireWeekday(weekDay, 'weekDay');
        const pos = p.weekPos ?? weekPositionOf(start.day);
        if (!isWeekPosition(pos)) throw new RangeError(`weekPos must be 1..4 or -1, got ${pos}`);
        return { kind: 'monthly-weekday', pos, weekDay };
      }
      if (p.monthOption !== 'exact' && p.monthOption !== null) {
        throw new RangeError(`monthOption must be 'exact', 'week_day' or null, got ${String(p.monthOption)}`);
      }
      if (p.fallback !== 0 && p.fallback !== 1) throw new RangeError(`fallback must be 0 or 1, got ${p.fallback}`);
      return { kind: 'monthly-exact', day: start.day, fallback: p.fallback };
    }
    default:
      throw new RangeError(`occurrence must be daily, weekly or monthly, got ${String(p.occurrence)}`);
  }
}

/** The start date's position among its month's same weekdays; the 5th counts as the last (-1). */
export function weekPositionOf(dayOfMonth: number): WeekPosition {
  const nth = Math.ceil(dayOfMonth / 7);
  return nth >= 5 ? -1 : (nth as 1 | 2 | 3 | 4);
}

function isWeekPosition(n: number): n is WeekPosition {
  return n === 1 || n === 2 || n === 3 || n === 4 || n === -1;
}

function requireWeekday(n: number, what: string): void {
  if (!Number.isInteger(n) || n < 0 || n > 6) throw new RangeError(`${what} must hold weekdays 0..6, got ${n}`);
}

function weekdayOfCivil(d: { year: number; month: number; day: number }): number {
  return weekdayOfDayNumber(daysFromCivil(d.year, d.month, d.day));
}

// ---------------------------------------------------------------------------
// Compiled series: rule + bounds + exceptions.

interface Series {
  readonly rule: DayRule;
  readonly first: number; // start day number
  readonly last: number; // ends day number, or the last representable day
  readonly exceptions: ReadonlySet<string>;
}

const NO_EXCEPTIONS: ReadonlySet<string> = new Set();

function compile(p: RecurrencePattern): Series {
  const rule = dayRuleFor(resolveRule(p));
  const start = requireDate(p.start, 'start');
  const first = daysFromCivil(start.year, start.month, start.day);
  let last = MAX_DAY_NUMBER;
  if (p.ends !== null) {
    const ends = requireDate(p.ends, 'ends');
    // ends < start is rejected by the API; here it simply means "no occurrences".
    last = daysFromCivil(ends.year, ends.month, ends.day);
  }
  return { rule, first, last, exceptions: p.exceptions ?? NO_EXCEPTIONS };
}

function dayNumberOf(s: string, what: string): number {
  const d = requireDate(s, what);
  return daysFromCivil(d.year, d.month, d.day);
}

/** Days the rule matches in [lo, hi] ∩ [start, ends], ascending, exceptions NOT removed. */
function* ruleDays(series: Series, lo: number, hi: number): Generator<number> {
  const from = Math.max(lo, series.first);
  const to = Math.min(hi, series.last);
  for (let d = series.rule.firstOnOrAfter(from); d !== null && d <= to; d = series.rule.firstOnOrAfter(d + 1)) {
    yield d;
  }
}

/**
 * Occurrence dates in [from, to] inclusive, ascending; never iterates past
 * `to` or `ends`; at most `limit` results (default: no limit — callers that
 * take ranges from users should pass one). Runs in O(days in [from, to]) or
 * better, independent of how long ago the series started.
 */
export function occurrencesBetween(
  p: RecurrencePattern,
  from: string,
  to: string,
  limit: number = Number.POSITIVE_INFINITY,
): string[] {
  if (!(limit >= 0) || (Number.isFinite(limit) && !Number.isInteger(limit))) {
    throw new RangeError(`limit must be a non-negative integer, got ${limit}`);
  }
  const series = compile(p);
  const lo = dayNumberOf(from, 'from');
  const hi = dayNumberOf(to, 'to');
  const out: string[] = [];
  if (limit === 0) return out;
  for (const d of ruleDays(series, lo, hi)) {
    const date = fromDayNumber(d);
    if (series.exceptions.has(date)) continue;
    out.push(date);
    if (out.length >= limit) break;
  }
  return out;
}

export function isOccurrence(p: RecurrencePattern, date: string): boolean {
  const series = compile(p);
  const d = dayNumberOf(date, 'date');
  if (d < series.first || d > series.last || series.exceptions.has(date)) return false;
  return series.rule.firstOnOrAfter(d) === d;
}

/**
 * First occurrence on or after `date`, or null when the series has ended.
 * Bounded: every skipped candidate is a distinct exception, so at most
 * `exceptions.size + 1` candidates are examined before an answer, and the
 * series end (or 9999-12-31) stops open-ended searches.
 */
export function nextOccurrenceOnOrAfter(p: RecurrencePattern, date: string): string | null {
  const series = compile(p);
  for (const d of ruleDays(series, dayNumberOf(date, 'date'), MAX_DAY_NUMBER)) {
    const s = fromDayNumber(d);
    if (!series.exceptions.has(s)) return s;
  }
  return null;
}

/** Last occurrence strictly before `date`, or null. Bounded like {@link nextOccurrenceOnOrAfter}. */
export function previousOccurrenceBefore(p: RecurrencePattern, date: string): string | null {
  const series = compile(p);
  const hi = Math.min(dayNumberOf(date, 'date') - 1, series.last);
  for (let d = series.rule.lastOnOrBefore(hi); d !== null && d >= series.first; d = series.rule.lastOnOrBefore(d - 1)) {
    const s = fromDayNumber(d);
    if (!series.exceptions.has(s)) return s;
  }
  return null;
}

/**
 * Days the rule produces on or after `from` (and ≤ ends), ignoring
 * exceptions: what an RRULE without EXDATEs would yield. Lazily generated;
 * take only what you need.
 */
export function* ruleDatesFrom(p: RecurrencePattern, from: string): Generator<string> {
  const series = compile(p);
  for (const d of ruleDays(series, dayNumberOf(from, 'from'), MAX_DAY_NUMBER)) yield fromDayNumber(d);
}
