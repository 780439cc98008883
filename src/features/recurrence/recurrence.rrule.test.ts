import { rrulestr } from 'rrule';
import { describe, expect, it } from 'vitest';
import type { RecurrencePattern } from './recurrence.engine.js';
import { toRRule } from './recurrence.rrule.js';
import { NEUTRAL } from './recurrence.test-helpers.js';

describe('toRRule text', () => {
  it('weekly in Berlin with ends and exceptions', () => {
    const p: RecurrencePattern = {
      ...NEUTRAL,
      start: '2026-01-05',
      occurrence: 'weekly',
      recurringDays: [3, 1],
      ends: '2026-03-30',
      // 01-13 is a Tuesday and 2025-01-01 is before the start: neither removes an instance.
      exceptions: new Set(['2026-01-14', '2026-01-12', '2026-01-13', '2025-01-01']),
    };
    expect(toRRule(p, { date: '2026-01-05', minutes: 9 * 60, timezone: 'Europe/Berlin' })).toBe(
      [
        'DTSTART;TZID=Europe/Berlin:20260105T090000',
        // 9:00 CEST on 03-30 is 07:00Z; its wall time read as UTC (09:00Z) is the later.
        'RRULE:FREQ=WEEKLY;BYDAY=MO,WE;UNTIL=20260330T090000Z',
        'EXDATE;TZID=Europe/Berlin:20260112T090000,20260114T090000',
      ].join('\n'),
    );
  });

  it('UNTIL west of UTC is the true instant (later than the wall time read as UTC)', () => {
    const p: RecurrencePattern = { ...NEUTRAL, start: '2026-01-30', occurrence: 'monthly', fallback: 1, ends: '2026-06-30' };
    expect(toRRule(p, { date: p.start, minutes: 9 * 60, timezone: 'America/New_York' })).toBe(
      [
        'DTSTART;TZID=America/New_York:20260130T090000',
        'RRULE:FREQ=MONTHLY;BYMONTHDAY=30,-1;BYSETPOS=1;UNTIL=20260630T130000Z',
      ].join('\n'),
    );
  });

  it('monthly forms', () => {
    const at = { minutes: 0, timezone: 'UTC' };
    const rule = (p: RecurrencePattern) => toRRule(p, { ...at, date: p.start }).split('\n')[1];
    expect(rule({ ...NEUTRAL, start: '2026-01-31', occurrence: 'monthly', monthOption: 'exact' })).toBe('RRULE:FREQ=MONTHLY;BYMONTHDAY=31');
    expect(rule({ ...NEUTRAL, start: '2026-01-31', occurrence: 'monthly', fallback: 1 })).toBe(
      'RRULE:FREQ=MONTHLY;BYMONTHDAY=31,-1;BYSETPOS=1',
    );
    expect(rule({ ...NEUTRAL, start: '2026-01-15', occurrence: 'monthly', fallback: 1 })).toBe('RRULE:FREQ=MONTHLY;BYMONTHDAY=15');
    expect(rule({ ...NEUTRAL, start: '2026-01-13', occurrence: 'monthly', monthOption: 'week_day' })).toBe(
      'RRULE:FREQ=MONTHLY;BYDAY=2TU',
    );
    expect(rule({ ...NEUTRAL, start: '2026-01-30', occurrence: 'monthly', monthOption: 'week_day' })).toBe(
      'RRULE:FREQ=MONTHLY;BYDAY=-1FR',
    );
    expect(rule({ ...NEUTRAL, start: '2026-01-01', occurrence: 'monthly', monthOption: 'week_day', weekPos: 4, weekDay: 4 })).toBe(
      'RRULE:FREQ=MONTHLY;BYDAY=4TH',
    );
  });

  it('UTC sessions use UTC date-times instead of TZID', () => {
    const p: RecurrencePattern = { ...NEUTRAL, start: '2026-01-01', occurrence: 'daily', exceptions: new Set(['2026-01-02']) };
    expect(toRRule(p, { date: p.start, minutes: 14 * 60 + 5, timezone: 'UTC' })).toBe(
      ['DTSTART:20260101T140500Z', 'RRULE:FREQ=DAILY', 'EXDATE:20260102T140500Z'].join('\n'),
    );
  });

  it('DTSTART is moved to the first real instance (RFC 5545 counts DTSTART as one)', () => {
    const p: RecurrencePattern = { ...NEUTRAL, start: '2026-03-10', occurrence: 'weekly', recurringDays: [6] }; // Tue start, Saturdays
    expect(toRRule(p, { date: p.start, minutes: 600, timezone: 'Europe/Berlin' }).split('\n')[0]).toBe(
      'DTSTART;TZID=Europe/Berlin:20260314T100000',
    );
  });

  it('a later export date exports the rest of the series', () => {
    const p: RecurrencePattern = { ...NEUTRAL, start: '2020-01-01', occurrence: 'daily', exceptions: new Set(['2020-01-02', '2026-05-02']) };
    expect(toRRule(p, { date: '2026-05-01', minutes: 600, timezone: 'Europe/Berlin' })).toBe(
      ['DTSTART;TZID=Europe/Berlin:20260501T100000', 'RRULE:FREQ=DAILY', 'EXDATE;TZID=Europe/Berlin:20260502T100000'].join('\n'),
    );
  });

  it('a series with no instances is DTSTART + COUNT=1 + EXDATE of DTSTART', () => {
    const p: RecurrencePattern = { ...NEUTRAL, start: '2026-03-10', occurrence: 'weekly', recurringDays: [1], ends: '2026-03-15' };
    const text = toRRule(p, { date: p.start, minutes: 150, timezone: 'America/New_York' });
    expect(text).toBe(
      [
        'DTSTART;TZID=America/New_York:20260310T023000',
        'RRULE:FREQ=DAILY;COUNT=1',
        'EXDATE;TZID=America/New_York:20260310T023000',
      ].join('\n'),
    );
    expect(rrulestr(text, { forceset: true }).all()).toEqual([]);
  });

  it('rejects bad start time input', () => {
    const p: RecurrencePattern = { ...NEUTRAL, start: '2026-01-01', occurrence: 'daily' };
    expect(() => toRRule(p, { date: p.start, minutes: 1440, timezone: 'UTC' })).toThrow(RangeError);
    expect(() => toRRule(p, { date: p.start, minutes: 0, timezone: '+02:00' })).toThrow(RangeError);
    expect(() => toRRule(p, { date: '2026-02-30', minutes: 0, timezone: 'UTC' })).toThrow(RangeError);
  });
});

describe('the fallback-1 form, proved with rrulestr over a leap year and a common year', () => {
  it.each([29, 30, 31])('the %i-th or the last day of shorter months', (day) => {
    const text = `DTSTART:202701${day}T100000Z` + `\nRRULE:FREQ=MONTHLY;BYMONTHDAY=${day},-1;BYSETPOS=1`;
    const got = rrulestr(text)
      .between(new Date('2027-01-01T00:00:00Z'), new Date('2028-12-31T23:59:59Z'), true)
      .map((d) => d.toISOString().slice(0, 10));
    const expected: string[] = [];
    for (const year of [2027, 2028]) {
      for (let month = 1; month <= 12; month++) {
        const length = new Date(Date.UTC(year, month, 0)).getUTCDate();
        expected.push(`${year}-${String(month).padStart(2, '0')}-${String(Math.min(day, length)).padStart(2, '0')}`);
      }
    }
    expect(got).toEqual(expected);
  });
});
