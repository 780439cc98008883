import { DateTime, IANAZone, Settings } from 'luxon';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { addDays } from './recurrence.dates.js';
import { occurrencesBetween, type RecurrencePattern } from './recurrence.engine.js';
import {
  formatTime12h,
  isValidTimeZone,
  localToInstant,
  occurrenceInstants,
  parseTime12h,
  todayIn,
  zoneOffsetMs,
} from './recurrence.time.js';

// Expected instants were computed independently with Python's zoneinfo
// (fold=0, which implements the same gap/overlap rules as RFC 5545).

const NINE_AM = 9 * 60;

/** The local wall-clock time of a UTC instant, for asserting "still 9:00 local". */
const localClock = (iso: string, tz: string) => DateTime.fromISO(iso, { zone: 'utc' }).setZone(tz).toFormat('yyyy-MM-dd HH:mm');

function dailyNineAm(tz: string, from: string, to: string) {
  const p: RecurrencePattern = {
    start: '2026-01-01',
    ends: null,
    occurrence: 'daily',
    recurringDays: [],
    monthOption: null,
    weekPos: null,
    weekDay: null,
    fallback: 0,
  };
  return occurrencesBetween(p, from, to).map((date) => ({
    date,
    ...occurrenceInstants(date, NINE_AM, 60, tz),
  }));
}

describe('a 9:00 AM daily series keeps 9:00 local across DST changes', () => {
  it.each([
    // zone, change day, starts_at on the day before, the day itself and the day after
    ['America/New_York', '2026-03-08', ['2026-03-07T14:00:00.000Z', '2026-03-08T13:00:00.000Z', '2026-03-09T13:00:00.000Z']],
    ['America/New_York', '2026-11-01', ['2026-10-31T13:00:00.000Z', '2026-11-01T14:00:00.000Z', '2026-11-02T14:00:00.000Z']],
    ['Europe/Berlin', '2026-03-29', ['2026-03-28T08:00:00.000Z', '2026-03-29T07:00:00.000Z', '2026-03-30T07:00:00.000Z']],
    ['Europe/Berlin', '2026-10-25', ['2026-10-24T07:00:00.000Z', '2026-10-25T08:00:00.000Z', '2026-10-26T08:00:00.000Z']],
    // Lord Howe shifts by 30 minutes: DST ends 2026-04-05, starts 2026-10-04.
    ['Australia/Lord_Howe', '2026-04-05', ['2026-04-03T22:00:00.000Z', '2026-04-04T22:30:00.000Z', '2026-04-05T22:30:00.000Z']],
    ['Australia/Lord_Howe', '2026-10-04', ['2026-10-02T22:30:00.000Z', '2026-10-03T22:00:00.000Z', '2026-10-04T22:00:00.000Z']],
  ] as const)('%s around %s', (tz, changeDay, expectedStarts) => {
    const rows = dailyNineAm(tz, addDays(changeDay, -1), addDays(changeDay, 1));
    expect(rows.map((r) => r.starts_at)).toEqual(expectedStarts);
    for (const r of rows) {
      expect(localClock(r.starts_at, tz)).toBe(`${r.date} 09:00`);
      // ends_at is 60 elapsed minutes later, which is 10:00 local on these days.
      expect(localClock(r.ends_at, tz)).toBe(`${r.date} 10:00`);
    }
  });
});

describe('spring-forward gap: a missing local time moves forward by the gap', () => {
  it.each([
    ['America/New_York', '2026-03-08', 2 * 60 + 30, '2026-03-08T07:30:00.000Z', '2026-03-08 03:30'],
    ['Europe/Berlin', '2026-03-29', 2 * 60 + 30, '2026-03-29T01:30:00.000Z', '2026-03-29 03:30'],
    ['Australia/Lord_Howe', '2026-10-04', 2 * 60 + 15, '2026-10-03T15:45:00.000Z', '2026-10-04 02:45'],
  ] as const)('%s %s at minute %i', (tz, date, minutes, instant, local) => {
    expect(localToInstant(date, minutes, tz)).toBe(instant);
    expect(localClock(instant, tz)).toBe(local);
  });

  it('gap edges: the minute before the gap is itself, the gap start and its end coincide', () => {
    expect(localToInstant('2026-03-08', 1 * 60 + 59, 'America/New_York')).toBe('2026-03-08T06:59:00.000Z');
    expect(localToInstant('2026-03-08', 2 * 60, 'America/New_York')).toBe('2026-03-08T07:00:00.000Z');
    expect(localToInstant('2026-03-08', 3 * 60, 'America/New_York')).toBe('2026-03-08T07:00:00.000Z');
  });
});

describe('fall-back overlap: a repeated local time is the earlier (daylight) instant', () => {
  it.each([
    ['America/New_York', '2026-11-01', 1 * 60 + 30, '2026-11-01T05:30:00.000Z'], // 1:30 EDT, not 06:30Z EST
    ['Europe/Berlin', '2026-10-25', 2 * 60 + 30, '2026-10-25T00:30:00.000Z'], // 2:30 CEST, not 01:30Z CET
    ['Australia/Lord_Howe', '2026-04-05', 1 * 60 + 45, '2026-04-04T14:45:00.000Z'], // +11:00, not 15:15Z at +10:30
  ] as const)('%s %s at minute %i', (tz, date, minutes, instant) => {
    expect(localToInstant(date, minutes, tz)).toBe(instant);
  });

  it('overlap edges in New York', () => {
    expect(localToInstant('2026-11-01', 59, 'America/New_York')).toBe('2026-11-01T04:59:00.000Z');
    expect(localToInstant('2026-11-01', 60, 'America/New_York')).toBe('2026-11-01T05:00:00.000Z');
    expect(localToInstant('2026-11-01', 120, 'America/New_York')).toBe('2026-11-01T07:00:00.000Z');
  });

  describe('does not depend on the current date (luxon’s fromObject does)', () => {
    afterEach(() => {
      Settings.now = () => Date.now();
    });
    it.each([
      ['in summer', Date.UTC(2026, 6, 1)],
      ['in winter', Date.UTC(2026, 0, 15)],
    ])('when the server runs %s', (_when, nowMs) => {
      Settings.now = () => nowMs;
      expect(localToInstant('2026-11-01', 90, 'America/New_York')).toBe('2026-11-01T05:30:00.000Z');
      expect(localToInstant('2026-10-25', 150, 'Europe/Berlin')).toBe('2026-10-25T00:30:00.000Z');
    });
  });

  it('a 60-minute session starting at 1:30 EDT ends at 1:30 EST (absolute duration)', () => {
    expect(occurrenceInstants('2026-11-01', 90, 60, 'America/New_York')).toEqual({
      starts_at: '2026-11-01T05:30:00.000Z',
      ends_at: '2026-11-01T06:30:00.000Z',
    });
  });
});

describe('half-hour offsets', () => {
  it('Asia/Kolkata (+05:30, no DST) on the US/EU change days', () => {
    expect(localToInstant('2026-03-08', NINE_AM, 'Asia/Kolkata')).toBe('2026-03-08T03:30:00.000Z');
    expect(localToInstant('2026-11-01', NINE_AM, 'Asia/Kolkata')).toBe('2026-11-01T03:30:00.000Z');
    // Just after local midnight is still the previous UTC day.
    expect(localToInstant('2026-03-08', 15, 'Asia/Kolkata')).toBe('2026-03-07T18:45:00.000Z');
  });
});

describe('occurrenceInstants', () => {
  it('a session crossing local midnight ends on the next day', () => {
    expect(occurrenceInstants('2026-03-10', 23 * 60 + 30, 90, 'Europe/Berlin')).toEqual({
      starts_at: '2026-03-10T22:30:00.000Z',
      ends_at: '2026-03-11T00:00:00.000Z',
    });
  });

  it('a 24-hour session on the 23-hour spring day ends at 1:00 local the next day', () => {
    const { starts_at, ends_at } = occurrenceInstants('2026-03-08', 0, 1440, 'America/New_York');
    expect(starts_at).toBe('2026-03-08T05:00:00.000Z');
    expect(ends_at).toBe('2026-03-09T05:00:00.000Z');
    expect(localClock(ends_at, 'America/New_York')).toBe('2026-03-09 01:00');
  });

  it('UTC is the identity', () => {
    expect(occurrenceInstants('2026-03-08', 14 * 60, 45, 'UTC')).toEqual({
      starts_at: '2026-03-08T14:00:00.000Z',
      ends_at: '2026-03-08T14:45:00.000Z',
    });
  });

  it('rejects out-of-range input', () => {
    expect(() => occurrenceInstants('2026-03-08', 0, 0, 'UTC')).toThrow(RangeError);
    expect(() => occurrenceInstants('2026-03-08', 0, 1441, 'UTC')).toThrow(RangeError);
    expect(() => occurrenceInstants('2026-03-08', 0, 1.5, 'UTC')).toThrow(RangeError);
    expect(() => localToInstant('2026-03-08', 1440, 'UTC')).toThrow(RangeError);
    expect(() => localToInstant('2026-03-08', -1, 'UTC')).toThrow(RangeError);
    expect(() => localToInstant('2026-02-30', 0, 'UTC')).toThrow(RangeError);
    expect(() => localToInstant('2026-03-08', 0, 'Mars/Base')).toThrow(RangeError);
  });
});

describe('isValidTimeZone', () => {
  it.each(['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'Australia/Lord_Howe', 'America/Argentina/Buenos_Aires', 'Etc/GMT+5', 'US/Eastern'])(
    'accepts %s',
    (tz) => expect(isValidTimeZone(tz)).toBe(true),
  );
  it.each(['', ' ', 'Mars/Base', '+02:00', '-05:00', 'UTC+2', 'Z', 'Europe/Berlin ', 'Europe//Berlin', '../etc/passwd'])(
    'rejects %j',
    (tz) => expect(isValidTimeZone(tz)).toBe(false),
  );
});

describe('zone offsets (kept per zone and UTC day)', () => {
  const DAY = 86_400_000;
  /** Every instant in [from, to) at which luxon, read directly, sees the zone's offset change. */
  function changes(tz: string, from: number, to: number): number[] {
    const zone = IANAZone.create(tz);
    const out: number[] = [];
    for (let day = from; day < to; day += DAY) {
      if (zone.offset(day) === zone.offset(day + DAY)) continue;
      let [before, after] = [day, day + DAY];
      while (after - before > 1) {
        const mid = Math.floor((before + after) / 2);
        if (zone.offset(mid) === zone.offset(day)) before = mid;
        else after = mid;
      }
      out.push(after);
    }
    return out;
  }

  // DST of an hour, of 30 minutes (Lord Howe), of two hours (Troll), negative (Dublin), a
  // skipped day (Apia, 2011), Ramadan pauses (Casablanca), local mean time (Amsterdam, 1937).
  it.each([
    ['America/New_York', '2026-01-01', '2027-01-01'],
    ['Europe/Berlin', '2026-01-01', '2027-01-01'],
    ['Australia/Lord_Howe', '2026-01-01', '2027-01-01'],
    ['Antarctica/Troll', '2026-01-01', '2027-01-01'],
    ['Europe/Dublin', '2026-01-01', '2027-01-01'],
    ['Pacific/Apia', '2011-01-01', '2012-01-01'],
    ['Africa/Casablanca', '2026-01-01', '2027-01-01'],
    ['Europe/Amsterdam', '1937-01-01', '1941-01-01'],
  ])('%s: every offset change between %s and %s, to the millisecond', (tz, from, to) => {
    const found = changes(tz, Date.parse(from), Date.parse(to));
    expect(found.length).toBeGreaterThan(0);
    const zone = IANAZone.create(tz);
    for (const at of found) {
      for (const ms of [at - DAY, at - 1, at, at + 1, at + DAY]) expect(zoneOffsetMs(tz, ms), `${tz} at ${new Date(ms).toISOString()}`).toBe(zone.offset(ms) * 60_000);
    }
  });

  it('agrees with luxon at any instant of any zone', () => {
    const zones = Intl.supportedValuesOf('timeZone');
    fc.assert(
      fc.property(fc.constantFrom(...zones), fc.integer({ min: Date.parse('1900-01-01'), max: Date.parse('2100-01-01') }), (tz, ms) => {
        expect(zoneOffsetMs(tz, ms)).toBe(IANAZone.create(tz).offset(ms) * 60_000);
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('todayIn', () => {
  const instant = new Date('2026-03-08T04:30:00.000Z');
  it('is the local date at the instant', () => {
    expect(todayIn('UTC', instant)).toBe('2026-03-08');
    expect(todayIn('America/New_York', instant)).toBe('2026-03-07'); // 23:30 EST
    expect(todayIn('Asia/Kolkata', instant)).toBe('2026-03-08');
    expect(todayIn('Pacific/Kiritimati', new Date('2026-03-08T10:00:00.000Z'))).toBe('2026-03-09'); // +14:00
    expect(todayIn('Pacific/Pago_Pago', new Date('2026-03-08T10:00:00.000Z'))).toBe('2026-03-07'); // -11:00
  });
  it('defaults to now and rejects bad input', () => {
    expect(todayIn('UTC')).toBe(new Date().toISOString().slice(0, 10));
    expect(() => todayIn('Nowhere/Special')).toThrow(RangeError);
    expect(() => todayIn('UTC', new Date(Number.NaN))).toThrow(RangeError);
  });
});

describe('12-hour times', () => {
  it.each([
    ['12:00 AM', 0],
    ['12:59 AM', 59],
    ['1:00 AM', 60],
    ['01:00 AM', 60],
    ['9:05 am', 545],
    ['11:59 AM', 719],
    ['12:00 PM', 720],
    ['12:30 PM', 750],
    ['12:30 pm', 750],
    ['1:00 PM', 780],
    ['11:59 pM', 1439],
  ])('parses %j as %i', (s, minutes) => expect(parseTime12h(s)).toBe(minutes));

  it.each([
    '',
    '0:30 AM',
    '00:30 AM',
    '13:00 PM',
    '12:60 PM',
    '9:5 AM',
    '9:005 AM',
    '9:00AM',
    '9:00  AM',
    ' 9:00 AM',
    '9:00 AM ',
    '9:00 A.M.',
    '9:00',
    '21:00',
    '123:00 PM',
    '9:00 XM',
    '9.00 AM',
    '٩:٠٠ AM',
  ])('rejects %j', (s) => expect(parseTime12h(s)).toBeNull());

  it.each([
    [0, '12:00 AM'],
    [59, '12:59 AM'],
    [60, '1:00 AM'],
    [545, '9:05 AM'],
    [719, '11:59 AM'],
    [720, '12:00 PM'],
    [750, '12:30 PM'],
    [1439, '11:59 PM'],
  ])('formats %i as %j', (minutes, s) => expect(formatTime12h(minutes)).toBe(s));

  it('round-trips every minute of the day', () => {
    for (let m = 0; m < 1440; m++) expect(parseTime12h(formatTime12h(m))).toBe(m);
  });

  it('rejects minutes outside 0..1439', () => {
    for (const bad of [-1, 1440, 1.5, Number.NaN]) expect(() => formatTime12h(bad)).toThrow(RangeError);
  });
});
