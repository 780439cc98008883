/**
 * Calendar arithmetic over `YYYY-MM-DD` strings in the proleptic Gregorian
 * calendar. No time zones, no `Date` objects: a date is a label on a calendar,
 * not an instant, so nothing here may depend on the host's zone.
 *
 * Internally a date is a "day number": days since 1970-01-01 (negative before
 * it). Conversion uses Howard Hinnant's integer `days_from_civil` /
 * `civil_from_days` algorithms, which are exact for every year and avoid
 * `Date.UTC`'s habit of mapping years 0–99 to 1900–1999.
 *
 * Supported years are 0000–9999, the ones the four-digit format can spell.
 */

export interface CivilDate {
  readonly year: number;
  readonly month: number; // 1..12
  readonly day: number; // 1..31
}

const DATE_SHAPE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Day number of 0000-01-01 and 9999-12-31: the representable range. */
export const MIN_DAY_NUMBER = daysFromCivil(0, 1, 1);
export const MAX_DAY_NUMBER = daysFromCivil(9999, 12, 31);

export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** Days in `month` (1..12) of `year`. */
export function daysInMonth(year: number, month: number): number {
  if (!Number.isInteger(month) || month < 1 || month > 12) {
    throw new RangeError(`month must be 1..12, got ${month}`);
  }
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Parses a real calendar date; null for bad shape or impossible dates (2026-02-30, 2026-13-01). */
export function parseDate(s: string): CivilDate | null {
  const m = DATE_SHAPE.exec(s);
  if (!m) return null;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12) return null;
  if (day < 1 || day > daysInMonth(year, month)) return null;
  return { year, month, day };
}

export function isRealDate(s: string): boolean {
  return parseDate(s) !== null;
}

export function formatDate(year: number, month: number, day: number): string {
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

/** Parses or throws: for inputs that callers were supposed to validate already. */
export function requireDate(s: string, what = 'date'): CivilDate {
  const d = parseDate(s);
  if (!d) throw new RangeError(`${what} must be a real YYYY-MM-DD date, got ${JSON.stringify(s)}`);
  return d;
}

/** Days since 1970-01-01 (Hinnant's days_from_civil). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400; // 0..399
  const shiftedMonth = month > 2 ? month - 3 : month + 9; // March = 0, so leap day is last
  const dayOfYear = Math.floor((153 * shiftedMonth + 2) / 5) + day - 1; // 0..365
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146097 + dayOfEra - 719468;
}

/** Inverse of daysFromCivil (Hinnant's civil_from_days). */
export function civilFromDays(dayNumber: number): CivilDate {
  const z = dayNumber + 719468;
  const era = Math.floor(z / 146097);
  const dayOfEra = z - era * 146097; // 0..146096
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36524) - Math.floor(dayOfEra / 146096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shiftedMonth = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * shiftedMonth + 2) / 5) + 1;
  const month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9;
  return { year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

export function toDayNumber(s: string): number {
  const { year, month, day } = requireDate(s);
  return daysFromCivil(year, month, day);
}

export function fromDayNumber(dayNumber: number): string {
  if (!Number.isInteger(dayNumber) || dayNumber < MIN_DAY_NUMBER || dayNumber > MAX_DAY_NUMBER) {
    throw new RangeError(`day number ${dayNumber} is outside 0000-01-01..9999-12-31`);
  }
  const { year, month, day } = civilFromDays(dayNumber);
  return formatDate(year, month, day);
}

export function addDays(s: string, days: number): string {
  if (!Number.isInteger(days)) throw new RangeError(`days must be an integer, got ${days}`);
  return fromDayNumber(toDayNumber(s) + days);
}

/** `b - a` in days (positive when b is later). */
export function daysBetween(a: string, b: string): number {
  return toDayNumber(b) - toDayNumber(a);
}

/** Weekday of a day number, 0 = Sunday. 1970-01-01 was a Thursday (4). */
export function weekdayOfDayNumber(dayNumber: number): number {
  return (((dayNumber + 4) % 7) + 7) % 7;
}

/** Weekday of a date, 0 = Sunday … 6 = Saturday. */
export function weekday(s: string): number {
  return weekdayOfDayNumber(toDayNumber(s));
}

/**
 * Orders two valid dates: -1, 0 or 1. Zero-padded ISO dates sort
 * lexicographically, so no parsing is needed once they are known valid.
 */
export function compareDates(a: string, b: string): -1 | 0 | 1 {
  requireDate(a);
  requireDate(b);
  return a < b ? -1 : a > b ? 1 : 0;
}
