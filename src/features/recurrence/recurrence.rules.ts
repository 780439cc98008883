/*
 * Day rules: a pattern's shape, ignoring start, ends and exceptions. Each jumps straight
 * to the first matching day on/after (or the last on/before) any day: O(1) for daily and
 * monthly rules, at most 7 steps for weekly ones.
 */
import { MAX_DAY_NUMBER, MIN_DAY_NUMBER, civilFromDays, daysFromCivil, daysInMonth, weekdayOfDayNumber } from './recurrence.dates.js';

/*
 * The engine's own words for a pattern's shape: it imports nothing outside this folder.
 * The domain's lists (domain/vocabulary.ts) hold the same values and sessions pass their
 * stored values here, so a value added there and not here fails to compile.
 */
/** How often a pattern repeats. */
export type Occurrence = 'daily' | 'weekly' | 'monthly';
/** A monthly pattern on the same day number, or on the same weekday of the same week. */
export type MonthOption = 'exact' | 'week_day';
/** The nth weekday of a month: 1–4, or -1 for the last. */
export type WeekPosition = 1 | 2 | 3 | 4 | -1;

/**
 * A pattern with every default filled in from the start date. This is the
 * single place where the contract's defaults live; toRRule reuses it so the
 * RRULE string can never disagree with the engine about them.
 */
export type ResolvedRule =
  | { readonly kind: 'daily' }
  /** Sorted, de-duplicated weekday numbers (0 = Sunday); never empty. */
  | { readonly kind: 'weekly'; readonly days: readonly number[] }
  | { readonly kind: 'monthly-exact'; readonly day: number; readonly fallback: 0 | 1 }
  | { readonly kind: 'monthly-weekday'; readonly pos: WeekPosition; readonly weekDay: number };

export interface DayRule {
  /** First matching day number >= `day`, or null past 9999-12-31. */
  firstOnOrAfter(day: number): number | null;
  /** Last matching day number <= `day`, or null before 0000-01-01. */
  lastOnOrBefore(day: number): number | null;
}

const dailyRule: DayRule = {
  firstOnOrAfter: (day) => (day <= MAX_DAY_NUMBER ? Math.max(day, MIN_DAY_NUMBER) : null),
  lastOnOrBefore: (day) => (day >= MIN_DAY_NUMBER ? Math.min(day, MAX_DAY_NUMBER) : null),
};

function weeklyRule(days: readonly number[]): DayRule {
  const wanted = new Set(days);
  // Any 7 consecutive days contain every weekday, so one week of stepping suffices.
  const scan = (day: number, step: 1 | -1): number | null => {
    for (let k = 0; k < 7; k++) {
      const d = day + k * step;
      if (d < MIN_DAY_NUMBER || d > MAX_DAY_NUMBER) return null;
      if (wanted.has(weekdayOfDayNumber(d))) return d;
    }
    return null; // unreachable: `days` is never empty
  };
  return {
    firstOnOrAfter: (day) => scan(Math.max(day, MIN_DAY_NUMBER), 1),
    lastOnOrBefore: (day) => scan(Math.min(day, MAX_DAY_NUMBER), -1),
  };
}

/** Months are numbered year * 12 + (month - 1) so stepping across years is plain arithmetic. */
const MIN_MONTH_INDEX = 0;
const MAX_MONTH_INDEX = 9999 * 12 + 11;

/**
 * A monthly rule is "at most one day per month", given by `pick`. Every
 * monthly rule picks a day in at least one of any two consecutive months
 * (the only gaps are fallback-0 months lacking the 29th–31st, and no two such
 * months are adjacent), so the searches below end within three months.
 */
function monthlyRule(pick: (year: number, month: number) => number | null): DayRule {
  const candidate = (monthIndex: number): number | null => {
    const year = Math.floor(monthIndex / 12);
    const month = (monthIndex % 12) + 1;
    const day = pick(year, month);
    return day === null ? null : daysFromCivil(year, month, day);
  };
  const monthIndexOf = (day: number): number => {
    const c = civilFromDays(day);
    return c.year * 12 + c.month - 1;
  };
  return {
    firstOnOrAfter(day) {
      if (day > MAX_DAY_NUMBER) return null;
      for (let m = monthIndexOf(Math.max(day, MIN_DAY_NUMBER)); m <= MAX_MONTH_INDEX; m++) {
        const c = candidate(m);
        if (c !== null && c >= day) return c;
      }
      return null;
    },
    lastOnOrBefore(day) {
      if (day < MIN_DAY_NUMBER) return null;
      for (let m = monthIndexOf(Math.min(day, MAX_DAY_NUMBER)); m >= MIN_MONTH_INDEX; m--) {
        const c = candidate(m);
        if (c !== null && c <= day) return c;
      }
      return null;
    },
  };
}

/** The `day`-th of the month; in shorter months skip (fallback 0) or take the last day (fallback 1). */
function exactDayPicker(day: number, fallback: 0 | 1) {
  return (year: number, month: number): number | null => {
    const length = daysInMonth(year, month);
    if (day <= length) return day;
    return fallback === 1 ? length : null;
  };
}

/** The nth (1..4) or last (-1) `weekDay` of the month; always exists. */
function nthWeekdayPicker(pos: WeekPosition, weekDay: number) {
  return (year: number, month: number): number => {
    if (pos === -1) {
      const last = daysInMonth(year, month);
      const lastWeekday = weekdayOfDayNumber(daysFromCivil(year, month, last));
      return last - ((lastWeekday - weekDay + 7) % 7);
    }
    const firstWeekday = weekdayOfDayNumber(daysFromCivil(year, month, 1));
    return 1 + ((weekDay - firstWeekday + 7) % 7) + 7 * (pos - 1);
  };
}

export function dayRuleFor(rule: ResolvedRule): DayRule {
  switch (rule.kind) {
    case 'daily':
      return dailyRule;
    case 'weekly':
      return weeklyRule(rule.days);
    case 'monthly-exact':
      return monthlyRule(exactDayPicker(rule.day, rule.fallback));
    case 'monthly-weekday':
      return monthlyRule(nthWeekdayPicker(rule.pos, rule.weekDay));
  }
}

