import { describe, expect, it } from 'vitest';
import {
  addDays,
  compareDates,
  daysBetween,
  daysInMonth,
  formatDate,
  fromDayNumber,
  isRealDate,
  parseDate,
  toDayNumber,
  weekday,
} from './recurrence.dates.js';
import {
  isOccurrence,
  nextOccurrenceOnOrAfter,
  occurrencesBetween,
  previousOccurrenceBefore,
  resolveRule,
  type RecurrencePattern,
} from './recurrence.engine.js';
import { pattern } from './recurrence.test-helpers.js';

const monthlyExact = (start: string, fallback: number, ends: string | null = null) =>
  pattern({ start, occurrence: 'monthly', monthOption: 'exact', fallback, ends });

// Expected values below were computed independently with Python's datetime/calendar.

describe('recurrence.dates', () => {
  it('accepts real dates and rejects impossible or malformed ones', () => {
    for (const ok of ['2026-01-01', '2024-02-29', '2000-02-29', '0000-01-01', '9999-12-31', '2026-12-31']) {
      expect(isRealDate(ok), ok).toBe(true);
    }
    for (const bad of [
      '2026-02-30',
      '2026-02-29',
      '2100-02-29',
      '2026-13-01',
      '2026-00-10',
      '2026-04-31',
      '2026-01-00',
      '2026-1-01',
      '26-01-01',
      '2026-01-01T00:00',
      ' 2026-01-01',
      '',
      '２０２６-01-01',
    ]) {
      expect(isRealDate(bad), bad).toBe(false);
    }
    expect(parseDate('2026-03-08')).toEqual({ year: 2026, month: 3, day: 8 });
  });

  it('knows month lengths including century leap rules', () => {
    expect(daysInMonth(2026, 2)).toBe(28);
    expect(daysInMonth(2024, 2)).toBe(29);
    expect(daysInMonth(2000, 2)).toBe(29);
    expect(daysInMonth(2100, 2)).toBe(28);
    expect(daysInMonth(2026, 4)).toBe(30);
    expect(daysInMonth(2026, 12)).toBe(31);
    expect(() => daysInMonth(2026, 13)).toThrow(RangeError);
  });

  it('adds days across month, year and leap boundaries', () => {
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
    expect(addDays('2024-02-28', 1)).toBe('2024-02-29');
    expect(addDays('2026-02-28', 1)).toBe('2026-03-01');
    expect(addDays('2100-02-28', 1)).toBe('2100-03-01');
    expect(addDays('2026-03-01', -1)).toBe('2026-02-28');
    expect(addDays('1970-01-01', -1)).toBe('1969-12-31');
    expect(() => addDays('9999-12-31', 1)).toThrow(RangeError);
  });

  it('computes weekdays (0 = Sunday), differences and order', () => {
    expect(weekday('2026-03-08')).toBe(0);
    expect(weekday('2026-01-01')).toBe(4);
    expect(weekday('2000-02-29')).toBe(2);
    expect(weekday('1969-12-31')).toBe(3);
    expect(daysBetween('2026-01-01', '2027-01-01')).toBe(365);
    expect(daysBetween('2024-01-01', '2025-01-01')).toBe(366);
    expect(daysBetween('2026-03-10', '2026-03-01')).toBe(-9);
    expect(compareDates('2026-01-02', '2026-01-10')).toBe(-1);
    expect(compareDates('2026-01-02', '2026-01-02')).toBe(0);
    expect(() => compareDates('2026-02-30', '2026-01-01')).toThrow(RangeError);
  });

  it('round-trips day numbers and agrees with Date.UTC over 0001..9999 samples', () => {
    expect(toDayNumber('1970-01-01')).toBe(0);
    for (let n = toDayNumber('0001-01-01'); n <= toDayNumber('9999-12-31'); n += 997) {
      const s = fromDayNumber(n);
      expect(toDayNumber(s)).toBe(n);
      const utc = new Date(n * 86_400_000);
      expect(s).toBe(formatDate(utc.getUTCFullYear(), utc.getUTCMonth() + 1, utc.getUTCDate()));
    }
  });
});

describe('monthly exact, 29th–31st', () => {
  const year2026 = ['2026-01-01', '2026-12-31'] as const;

  it('31st, fallback 0 skips months without a 31st', () => {
    expect(occurrencesBetween(monthlyExact('2026-01-31', 0), ...year2026)).toEqual([
      '2026-01-31',
      '2026-03-31',
      '2026-05-31',
      '2026-07-31',
      '2026-08-31',
      '2026-10-31',
      '2026-12-31',
    ]);
  });

  it('31st, fallback 1 uses each short month’s last day', () => {
    expect(occurrencesBetween(monthlyExact('2026-01-31', 1), ...year2026)).toEqual([
      '2026-01-31',
      '2026-02-28',
      '2026-03-31',
      '2026-04-30',
      '2026-05-31',
      '2026-06-30',
      '2026-07-31',
      '2026-08-31',
      '2026-09-30',
      '2026-10-31',
      '2026-11-30',
      '2026-12-31',
    ]);
  });

  it('30th, fallback 1 is the 30th (never the 31st) or the last day of February', () => {
    expect(occurrencesBetween(monthlyExact('2026-01-30', 1), '2026-01-01', '2026-05-31')).toEqual([
      '2026-01-30',
      '2026-02-28',
      '2026-03-30',
      '2026-04-30',
      '2026-05-30',
    ]);
  });

  it('30th, fallback 0 skips February only', () => {
    expect(occurrencesBetween(monthlyExact('2026-01-30', 0), '2026-01-01', '2026-04-30')).toEqual([
      '2026-01-30',
      '2026-03-30',
      '2026-04-30',
    ]);
  });

  it('29th follows leap years: fallback 0 skips Feb 2027, keeps Feb 29 2028', () => {
    const p = monthlyExact('2027-01-29', 0);
    expect(occurrencesBetween(p, '2027-01-01', '2027-03-31')).toEqual(['2027-01-29', '2027-03-29']);
    expect(occurrencesBetween(p, '2028-02-01', '2028-03-31')).toEqual(['2028-02-29', '2028-03-29']);
  });

  it('29th, fallback 1: Feb 28 in common years, Feb 29 in leap years', () => {
    const p = monthlyExact('2027-01-29', 1);
    expect(occurrencesBetween(p, '2027-02-01', '2027-02-28')).toEqual(['2027-02-28']);
    expect(occurrencesBetween(p, '2028-02-01', '2028-02-29')).toEqual(['2028-02-29']);
  });

  it('a monthly_option of null means exact', () => {
    const p = pattern({ start: '2026-01-31', occurrence: 'monthly', monthOption: null, fallback: 1 });
    expect(occurrencesBetween(p, '2026-02-01', '2026-04-30')).toEqual(['2026-02-28', '2026-03-31', '2026-04-30']);
  });

  it('the 1st..28th ignore the fallback', () => {
    expect(occurrencesBetween(monthlyExact('2026-01-28', 0), '2026-02-01', '2026-03-31')).toEqual([
      '2026-02-28',
      '2026-03-28',
    ]);
  });
});

describe('leap years and year boundaries', () => {
  it('a series started on Feb 29 recurs monthly on the 29th and on Feb 29 of leap years only (fallback 0)', () => {
    const p = monthlyExact('2024-02-29', 0);
    expect(occurrencesBetween(p, '2024-12-01', '2025-03-31')).toEqual(['2024-12-29', '2025-01-29', '2025-03-29']);
    expect(occurrencesBetween(p, '2028-02-01', '2028-02-29')).toEqual(['2028-02-29']);
    expect(isOccurrence(p, '2100-02-28')).toBe(false); // 2100 is not a leap year
  });

  it('a daily series crosses Feb 28 → Mar 1 correctly in 2100 and 2000', () => {
    const daily = pattern({ start: '1990-01-01', occurrence: 'daily' });
    expect(occurrencesBetween(daily, '2100-02-27', '2100-03-01')).toEqual(['2100-02-27', '2100-02-28', '2100-03-01']);
    expect(occurrencesBetween(daily, '2000-02-28', '2000-03-01')).toEqual(['2000-02-28', '2000-02-29', '2000-03-01']);
  });

  it('a weekly series crosses the year boundary', () => {
    const p = pattern({ start: '2026-01-05', occurrence: 'weekly', recurringDays: [1, 5] }); // Mon, Fri
    expect(occurrencesBetween(p, '2026-12-28', '2027-01-06')).toEqual(['2026-12-28', '2027-01-01', '2027-01-04']);
  });

  it('a monthly series crosses the year boundary', () => {
    expect(occurrencesBetween(monthlyExact('2026-01-31', 1), '2026-11-15', '2027-02-28')).toEqual([
      '2026-11-30',
      '2026-12-31',
      '2027-01-31',
      '2027-02-28',
    ]);
  });
});

describe('monthly week_day', () => {
  const weekDayPattern = (start: string, weekPos: number | null, weekDay: number | null) =>
    pattern({ start, occurrence: 'monthly', monthOption: 'week_day', weekPos, weekDay });

  it('last Friday (-1) of every month', () => {
    expect(occurrencesBetween(weekDayPattern('2026-01-01', -1, 5), '2026-01-01', '2026-12-31')).toEqual([
      '2026-01-30',
      '2026-02-27',
      '2026-03-27',
      '2026-04-24',
      '2026-05-29',
      '2026-06-26',
      '2026-07-31',
      '2026-08-28',
      '2026-09-25',
      '2026-10-30',
      '2026-11-27',
      '2026-12-25',
    ]);
  });

  it('4th Thursday of every month', () => {
    expect(occurrencesBetween(weekDayPattern('2026-01-01', 4, 4), '2026-01-01', '2026-12-31')).toEqual([
      '2026-01-22',
      '2026-02-26',
      '2026-03-26',
      '2026-04-23',
      '2026-05-28',
      '2026-06-25',
      '2026-07-23',
      '2026-08-27',
      '2026-09-24',
      '2026-10-22',
      '2026-11-26',
      '2026-12-24',
    ]);
  });

  it('takes missing position and weekday from the start; a 5th weekday counts as the last', () => {
    // 2026-01-30 is the 5th Friday of January → last Friday.
    expect(resolveRule(weekDayPattern('2026-01-30', null, null))).toEqual({
      kind: 'monthly-weekday',
      pos: -1,
      weekDay: 5,
    });
    expect(occurrencesBetween(weekDayPattern('2026-01-30', null, null), '2026-02-01', '2026-03-31')).toEqual([
      '2026-02-27',
      '2026-03-27',
    ]);
    // 2026-01-22 is the 4th Thursday; only the position is missing.
    expect(occurrencesBetween(weekDayPattern('2026-01-22', null, 4), '2026-02-01', '2026-02-28')).toEqual(['2026-02-26']);
    // 2026-01-13 is a Tuesday; only the weekday is missing.
    expect(occurrencesBetween(weekDayPattern('2026-01-13', 2, null), '2026-01-01', '2026-06-30')).toEqual([
      '2026-01-13',
      '2026-02-10',
      '2026-03-10',
      '2026-04-14',
      '2026-05-12',
      '2026-06-09',
    ]);
  });

  it('does not produce a month’s occurrence that falls before the start', () => {
    // The 1st Monday of January 2026 is the 5th; the series starts on the 6th.
    expect(occurrencesBetween(weekDayPattern('2026-01-06', 1, 1), '2026-01-01', '2026-02-28')).toEqual(['2026-02-02']);
  });
});

describe('weekly', () => {
  it('multiple days, in order, starting on the start date', () => {
    const p = pattern({ start: '2026-01-05', occurrence: 'weekly', recurringDays: [5, 1, 3] });
    expect(occurrencesBetween(p, '2026-01-01', '2026-01-18')).toEqual([
      '2026-01-05',
      '2026-01-07',
      '2026-01-09',
      '2026-01-12',
      '2026-01-14',
      '2026-01-16',
    ]);
  });

  it('empty days mean the weekday of the start', () => {
    const p = pattern({ start: '2026-01-01', occurrence: 'weekly', recurringDays: [] }); // Thursday
    expect(occurrencesBetween(p, '2026-01-01', '2026-01-31')).toEqual([
      '2026-01-01',
      '2026-01-08',
      '2026-01-15',
      '2026-01-22',
      '2026-01-29',
    ]);
  });

  it('a start that is not one of the days is not an occurrence', () => {
    const p = pattern({ start: '2026-03-10', occurrence: 'weekly', recurringDays: [0, 6] }); // Tue start; weekends
    expect(isOccurrence(p, '2026-03-10')).toBe(false);
    expect(occurrencesBetween(p, '2026-03-01', '2026-03-16')).toEqual(['2026-03-14', '2026-03-15']);
  });

  it('duplicate days are harmless', () => {
    const p = pattern({ start: '2026-01-05', occurrence: 'weekly', recurringDays: [1, 1, 1] });
    expect(occurrencesBetween(p, '2026-01-05', '2026-01-12')).toEqual(['2026-01-05', '2026-01-12']);
  });
});

describe('ranges, ends and exceptions', () => {
  const daily = pattern({ start: '2026-03-10', occurrence: 'daily', ends: '2026-03-14' });

  it('a range before the start yields nothing; one straddling the start begins at the start', () => {
    expect(occurrencesBetween(daily, '2026-03-01', '2026-03-09')).toEqual([]);
    expect(occurrencesBetween(daily, '2026-03-01', '2026-03-11')).toEqual(['2026-03-10', '2026-03-11']);
  });

  it('a range starting mid-series begins at the range', () => {
    expect(occurrencesBetween(daily, '2026-03-12', '2026-03-31')).toEqual(['2026-03-12', '2026-03-13', '2026-03-14']);
  });

  it('ends is inclusive, including when it is the only day', () => {
    expect(occurrencesBetween(daily, '2026-03-14', '2026-03-20')).toEqual(['2026-03-14']);
    const oneDay = pattern({ start: '2026-03-10', occurrence: 'daily', ends: '2026-03-10' });
    expect(occurrencesBetween(oneDay, '2026-01-01', '2026-12-31')).toEqual(['2026-03-10']);
    expect(occurrencesBetween(monthlyExact('2026-01-31', 1, '2026-03-31'), '2026-01-01', '2026-12-31')).toEqual([
      '2026-01-31',
      '2026-02-28',
      '2026-03-31',
    ]);
  });

  it('ends before start or an inverted range means no occurrences', () => {
    expect(occurrencesBetween({ ...daily, ends: '2026-03-01' }, '2026-01-01', '2026-12-31')).toEqual([]);
    expect(occurrencesBetween(daily, '2026-03-14', '2026-03-10')).toEqual([]);
  });

  it('exceptions are never produced', () => {
    const p = { ...daily, exceptions: new Set(['2026-03-11', '2026-03-14', '2026-04-01']) };
    expect(occurrencesBetween(p, '2026-03-01', '2026-03-31')).toEqual(['2026-03-10', '2026-03-12', '2026-03-13']);
    expect(isOccurrence(p, '2026-03-11')).toBe(false);
    expect(isOccurrence(p, '2026-03-12')).toBe(true);
  });

  it('limit caps the result count and keeps the earliest dates', () => {
    const open = pattern({ start: '2026-01-01', occurrence: 'daily' });
    expect(occurrencesBetween(open, '2026-01-01', '2026-12-31', 3)).toEqual(['2026-01-01', '2026-01-02', '2026-01-03']);
    expect(occurrencesBetween(open, '2026-01-01', '2026-12-31', 0)).toEqual([]);
    expect(() => occurrencesBetween(open, '2026-01-01', '2026-12-31', -1)).toThrow(RangeError);
    expect(() => occurrencesBetween(open, '2026-01-01', '2026-12-31', 1.5)).toThrow(RangeError);
  });

  it('rejects malformed dates and fields with RangeError', () => {
    const open = pattern({ start: '2026-01-01', occurrence: 'daily' });
    expect(() => occurrencesBetween(open, '2026-02-30', '2026-03-01')).toThrow(RangeError);
    expect(() => isOccurrence({ ...open, start: '2026-13-01' }, '2026-01-01')).toThrow(RangeError);
    expect(() => isOccurrence({ ...open, occurrence: 'weekly', recurringDays: [7] }, '2026-01-01')).toThrow(RangeError);
    expect(() =>
      isOccurrence({ ...open, occurrence: 'monthly', monthOption: 'week_day', weekPos: 5, weekDay: 1 }, '2026-01-01'),
    ).toThrow(RangeError);
    expect(() => isOccurrence({ ...open, occurrence: 'monthly', fallback: 2 }, '2026-01-01')).toThrow(RangeError);
  });

  it('ignores fields that belong to another occurrence kind (stale columns)', () => {
    const p = pattern({ start: '2026-01-01', occurrence: 'daily', recurringDays: [9], weekPos: 7, fallback: 5 });
    expect(occurrencesBetween(p, '2026-01-01', '2026-01-02')).toEqual(['2026-01-01', '2026-01-02']);
  });
});

describe('nextOccurrenceOnOrAfter / previousOccurrenceBefore', () => {
  const lastFriday = pattern({
    start: '2026-01-01',
    occurrence: 'monthly',
    monthOption: 'week_day',
    weekPos: -1,
    weekDay: 5,
    ends: '2026-12-31',
    exceptions: new Set(['2026-03-27']),
  });

  it('next is on-or-after, previous is strictly before', () => {
    expect(nextOccurrenceOnOrAfter(lastFriday, '2026-01-30')).toBe('2026-01-30');
    expect(nextOccurrenceOnOrAfter(lastFriday, '2026-01-31')).toBe('2026-02-27');
    expect(previousOccurrenceBefore(lastFriday, '2026-02-27')).toBe('2026-01-30');
    expect(previousOccurrenceBefore(lastFriday, '2026-02-28')).toBe('2026-02-27');
  });

  it('skip exceptions', () => {
    expect(nextOccurrenceOnOrAfter(lastFriday, '2026-03-01')).toBe('2026-04-24');
    expect(previousOccurrenceBefore(lastFriday, '2026-04-24')).toBe('2026-02-27');
  });

  it('clamp to the series: before the start → first occurrence, after ends → null', () => {
    expect(nextOccurrenceOnOrAfter(lastFriday, '1999-05-05')).toBe('2026-01-30');
    expect(previousOccurrenceBefore(lastFriday, '2026-01-30')).toBeNull();
    expect(nextOccurrenceOnOrAfter(lastFriday, '2026-12-26')).toBeNull();
    expect(previousOccurrenceBefore(lastFriday, '2030-01-01')).toBe('2026-12-25');
  });

  it('a series whose every candidate is an exception returns null quickly', () => {
    const p = pattern({
      start: '2026-01-01',
      occurrence: 'weekly',
      recurringDays: [1],
      ends: '2026-01-31',
      exceptions: new Set(['2026-01-05', '2026-01-12', '2026-01-19', '2026-01-26']),
    });
    expect(nextOccurrenceOnOrAfter(p, '2026-01-01')).toBeNull();
    expect(previousOccurrenceBefore(p, '2026-02-01')).toBeNull();
  });

  it('an open-ended series stops at the end of the representable calendar', () => {
    const p = monthlyExact('2026-01-31', 0);
    expect(nextOccurrenceOnOrAfter(p, '9999-12-31')).toBe('9999-12-31');
    expect(nextOccurrenceOnOrAfter(monthlyExact('2026-01-30', 0), '9999-12-31')).toBeNull();
    expect(previousOccurrenceBefore(p, '0001-01-01')).toBeNull();
    // A round takes ~0.03 ms; one that walked from the series' start took ~21 ms (measured:
    // 2.1 s for 100 rounds). One round against 50 ms let that walk pass and could fail on a
    // pause of a busy machine; 300 rounds against a second do neither.
    const t0 = performance.now();
    for (let i = 0; i < 300; i++) {
      nextOccurrenceOnOrAfter(p, '9999-12-31');
      nextOccurrenceOnOrAfter(monthlyExact('2026-01-30', 0), '9999-12-31');
      previousOccurrenceBefore(p, '0001-01-01');
    }
    expect(performance.now() - t0).toBeLessThan(1000);
  });
});

describe('old series stay cheap', () => {
  // 1996-03-15 was a Friday, the 3rd Friday of March 1996.
  const start = '1996-03-15';
  const cases: Array<[string, RecurrencePattern, string, string, string[]]> = [
    [
      'daily',
      pattern({ start, occurrence: 'daily' }),
      '2026-03-09',
      '2026-03-15',
      ['2026-03-09', '2026-03-10', '2026-03-11', '2026-03-12', '2026-03-13', '2026-03-14', '2026-03-15'],
    ],
    ['weekly', pattern({ start, occurrence: 'weekly' }), '2026-03-09', '2026-03-15', ['2026-03-13']],
    ['monthly exact', monthlyExact(start, 0), '2026-03-09', '2026-03-15', ['2026-03-15']],
    [
      'monthly week_day',
      pattern({ start, occurrence: 'monthly', monthOption: 'week_day' }),
      '2026-03-16',
      '2026-03-22',
      ['2026-03-20'],
    ],
  ];

  it.each(cases)('a 30-year-old %s series queried for one week', (_name, p, from, to, expected) => {
    expect(occurrencesBetween(p, from, to)).toEqual(expected);
    expect(nextOccurrenceOnOrAfter(p, from)).toBe(expected[0]);
    const t0 = performance.now();
    for (let i = 0; i < 200; i++) occurrencesBetween(p, from, to);
    expect(performance.now() - t0).toBeLessThan(1000); // generous: CI machines are busy
  });

  // The discriminating check: from year 0001 to 9999 is ~3.65 million days. A
  // query that walked from the series start would need tens of milliseconds
  // per call even as a bare integer loop (seconds for 100 calls); jumping
  // straight to the range takes microseconds.
  it.each(['daily', 'weekly', 'monthly'] as const)('a %s series from year 0001 queried in 9999 is instant', (occurrence) => {
    const p = pattern({ start: '0001-01-01', occurrence }); // a Monday
    const t0 = performance.now();
    for (let i = 0; i < 100; i++) {
      occurrencesBetween(p, '9999-12-20', '9999-12-31');
      previousOccurrenceBefore(p, '9999-12-26');
    }
    expect(performance.now() - t0).toBeLessThan(1000);
  });

  it('weekly from year 0001: the right dates at the end of the calendar', () => {
    const p = pattern({ start: '0001-01-01', occurrence: 'weekly', recurringDays: [0] });
    expect(occurrencesBetween(p, '9999-12-20', '9999-12-31')).toEqual(['9999-12-26']);
    expect(previousOccurrenceBefore(p, '9999-12-26')).toBe('9999-12-19');
  });
});
