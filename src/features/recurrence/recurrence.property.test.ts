/**
 * Property tests: the engine against the `rrule` package as an independent
 * oracle, and toRRule's text against `rrulestr`.
 *
 * Reproduce a failure with the seed fast-check prints:
 *   FC_SEED=<seed> npx vitest run src/features/recurrence/recurrence.property.test.ts
 *
 * The oracle deliberately does not reuse the engine's helpers or toRRule: it
 * does its calendar math with `Date.UTC` and expresses the product rules with
 * rrule's own API (floating dates: UTC midnight stands for the local date).
 * In particular "the d-th, or the last day of shorter months" is built as the
 * union of two rules (BYMONTHDAY=d, and BYMONTHDAY=-1 in the months that can
 * be shorter than d) rather than toRRule's BYSETPOS form.
 */
import fc from 'fast-check';
import { DateTime } from 'luxon';
import { RRule, RRuleSet, rrulestr, type Weekday } from 'rrule';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  isOccurrence,
  nextOccurrenceOnOrAfter,
  occurrencesBetween,
  previousOccurrenceBefore,
  type RecurrencePattern,
} from './recurrence.engine.js';
import { toRRule } from './recurrence.rrule.js';
import { propertySeed } from '../../../test/helpers/seed.js';

const seed = propertySeed();
const params = { numRuns: 300, seed };

// ---------------------------------------------------------------------------
// Test-side calendar math, independent of recurrence.dates.ts.

const DAY_MS = 86_400_000;
const utcMidnight = (date: string): Date => new Date(`${date}T00:00:00.000Z`);
const isoDate = (d: Date): string => d.toISOString().slice(0, 10);
const plusDays = (date: string, n: number): string => isoDate(new Date(utcMidnight(date).getTime() + n * DAY_MS));
const monthLength = (year: number, month: number): number => new Date(Date.UTC(year, month, 0)).getUTCDate();

// ---------------------------------------------------------------------------
// Oracle.

const RRULE_WEEKDAYS: readonly Weekday[] = [RRule.SU, RRule.MO, RRule.TU, RRule.WE, RRule.TH, RRule.FR, RRule.SA];

function rruleWeekday(day: number): Weekday {
  const wd = RRULE_WEEKDAYS[day];
  if (wd === undefined) throw new Error(`bad weekday ${day}`);
  return wd;
}

/** Months that have fewer than `day` days in some years (2023 is a common year, so February's 28 counts). */
function monthsShorterThan(day: number): number[] {
  return [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12].filter((m) => monthLength(2023, m) < day);
}

function oracle(p: RecurrencePattern, from: string, to: string): string[] {
  const start = utcMidnight(p.start);
  const base = { dtstart: start, until: p.ends === null ? null : utcMidnight(p.ends) };
  const set = new RRuleSet();
  if (p.occurrence === 'daily') {
    set.rrule(new RRule({ ...base, freq: RRule.DAILY }));
  } else if (p.occurrence === 'weekly') {
    const days = p.recurringDays.length > 0 ? p.recurringDays : [start.getUTCDay()];
    set.rrule(new RRule({ ...base, freq: RRule.WEEKLY, byweekday: days.map(rruleWeekday) }));
  } else if (p.monthOption === 'week_day') {
    const dayOfMonth = start.getUTCDate();
    const nth = Math.floor((dayOfMonth - 1) / 7) + 1; // how many such weekdays up to and including the start
    const pos = p.weekPos ?? (nth === 5 ? -1 : nth);
    const weekDay = p.weekDay ?? start.getUTCDay();
    set.rrule(new RRule({ ...base, freq: RRule.MONTHLY, byweekday: [rruleWeekday(weekDay).nth(pos)] }));
  } else {
    const day = start.getUTCDate();
    set.rrule(new RRule({ ...base, freq: RRule.MONTHLY, bymonthday: [day] }));
    if (p.fallback === 1 && day > 28) {
      set.rrule(new RRule({ ...base, freq: RRule.MONTHLY, bymonth: monthsShorterThan(day), bymonthday: [-1] }));
    }
  }
  for (const e of p.exceptions ?? []) set.exdate(utcMidnight(e));
  return set.between(utcMidnight(from), utcMidnight(to), true).map(isoDate);
}

// ---------------------------------------------------------------------------
// Arbitraries.

const MIN_YEAR = 1990;
const MAX_YEAR = 2060;

/** Real dates 1990–2060, with the 28th–31st over-represented (they are where the bugs live). */
const dateArb = fc
  .record({
    year: fc.integer({ min: MIN_YEAR, max: MAX_YEAR }),
    month: fc.integer({ min: 1, max: 12 }),
    day: fc.oneof(fc.integer({ min: 1, max: 31 }), fc.integer({ min: 28, max: 31 })),
  })
  .map(({ year, month, day }) => isoDate(new Date(Date.UTC(year, month - 1, Math.min(day, monthLength(year, month))))));

const weekPosArb = fc.constantFrom(1, 2, 3, 4, -1);

const patternArb = fc
  .record({
    start: dateArb,
    endsAfter: fc.option(fc.integer({ min: 0, max: 3000 }), { nil: null }),
    occurrence: fc.constantFrom('daily' as const, 'weekly' as const, 'monthly' as const),
    recurringDays: fc.array(fc.integer({ min: 0, max: 6 }), { maxLength: 7 }),
    monthOption: fc.constantFrom('exact' as const, 'week_day' as const, null),
    weekPos: fc.option(weekPosArb, { nil: null }),
    weekDay: fc.option(fc.integer({ min: 0, max: 6 }), { nil: null }),
    fallback: fc.constantFrom(0, 1),
  })
  .map(
    ({ endsAfter, ...rest }): RecurrencePattern => ({
      ...rest,
      ends: endsAfter === null ? null : plusDays(rest.start, endsAfter),
    }),
  );

/** A pattern plus a query range (up to 400 days) that may begin before, at or long after the start. */
const caseArb = patternArb.chain((p) =>
  fc
    .record({
      fromOffset: fc.oneof(fc.integer({ min: -400, max: 400 }), fc.integer({ min: -400, max: 20 * 366 })),
      length: fc.integer({ min: 0, max: 400 }),
      exceptionOffsets: fc.array(fc.integer({ min: 0, max: 400 }), { maxLength: 12 }),
    })
    .map(({ fromOffset, length, exceptionOffsets }) => {
      const from = plusDays(p.start, fromOffset);
      const to = plusDays(from, length);
      // Exceptions land inside the range so that they actually hit occurrences.
      const exceptions = new Set(exceptionOffsets.map((n) => plusDays(from, Math.min(n, length))));
      return { p: { ...p, exceptions }, from, to };
    }),
);

describe('occurrencesBetween agrees with the rrule oracle', () => {
  it('for random patterns and ranges', () => {
    fc.assert(
      fc.property(caseArb, ({ p, from, to }) => {
        expect(occurrencesBetween(p, from, to)).toEqual(oracle(p, from, to));
      }),
      params,
    );
  });

  it('and the point queries agree with the range query', () => {
    fc.assert(
      fc.property(caseArb, fc.integer({ min: 1, max: 5 }), ({ p, from, to }, limit) => {
        const all = occurrencesBetween(p, from, to);
        expect(occurrencesBetween(p, from, to, limit)).toEqual(all.slice(0, limit));
        const first = nextOccurrenceOnOrAfter(p, from);
        if (all.length > 0) expect(first).toBe(all[0]);
        else expect(first === null || first > to).toBe(true);
        const last = previousOccurrenceBefore(p, plusDays(to, 1));
        if (all.length > 0) expect(last).toBe(all[all.length - 1]);
        else expect(last === null || last < from).toBe(true);
        const wanted = new Set(all);
        for (let d = from; d <= to; d = plusDays(d, 1)) expect(isOccurrence(p, d)).toBe(wanted.has(d));
      }),
      { ...params, numRuns: 100 },
    );
  });
});

// ---------------------------------------------------------------------------
// toRRule → rrulestr.

/**
 * Zones with DST in either hemisphere, half- and quarter-hour offsets, a
 * 30-minute DST shift, and large offsets either side of UTC. Zones that ever
 * skipped a whole calendar day (Pacific/Apia 2011, Pacific/Kiritimati 1994)
 * are left out: there the local date itself does not exist.
 */
const zoneArb = fc.constantFrom(
  'UTC',
  'America/New_York',
  'Europe/Berlin',
  'Asia/Kolkata',
  'Asia/Kathmandu',
  'Australia/Lord_Howe',
  'Pacific/Auckland',
  'America/St_Johns',
  'Pacific/Honolulu',
  'America/Sao_Paulo',
);

/**
 * rrule.js converts its wall-clock results to instants using the offset at
 * the wrong moment near a DST change, so a result can be off by the DST
 * shift (≤ 1 h in these zones). Keeping the time between 02:00 and 22:00
 * keeps such a result on the right local date, which is all we compare.
 */
const minutesArb = fc.integer({ min: 120, max: 22 * 60 - 1 });

/** The local dates an RRULE text yields in [from, to], read back with rrulestr. */
function datesFromText(text: string, tz: string, from: string, to: string): string[] {
  const set = rrulestr(text, { forceset: true });
  // Query a little wider in UTC, then keep the local dates inside the range.
  const after = new Date(utcMidnight(from).getTime() - 2 * DAY_MS);
  const before = new Date(utcMidnight(to).getTime() + 3 * DAY_MS);
  return set
    .between(after, before, true)
    .map((d) => DateTime.fromJSDate(d).setZone(tz).toISODate() ?? 'invalid')
    .filter((d) => d >= from && d <= to);
}

/**
 * rrule.js spends ~0.3 ms per TZID instance (it formats every instance from
 * DTSTART on with toLocaleString, twice), so these cases keep the instance count
 * small: the export starts shortly before the query range (toRRule's "rest
 * of the series" mode; when the range is near the series start, DTSTART is
 * the series start), ranges hold a few dozen instances at most, and `ends`
 * falls near the range so UNTIL is exercised.
 */
const MAX_RANGE_DAYS = { daily: 21, weekly: 63, monthly: 400 } as const;

const textCaseArb = patternArb.chain((p) =>
  fc
    .record({
      fromOffset: fc.oneof(fc.integer({ min: -40, max: 60 }), fc.integer({ min: -40, max: 20 * 366 })),
      length: fc.integer({ min: 0, max: MAX_RANGE_DAYS[p.occurrence] }),
      lead: fc.integer({ min: 0, max: 14 }),
      endsDelta: fc.option(fc.integer({ min: -40, max: MAX_RANGE_DAYS[p.occurrence] + 40 }), { nil: null }),
      exceptionOffsets: fc.array(fc.integer({ min: -5, max: MAX_RANGE_DAYS[p.occurrence] }), { maxLength: 8 }),
      tz: zoneArb,
      minutes: minutesArb,
    })
    .map(({ fromOffset, length, lead, endsDelta, exceptionOffsets, tz, minutes }) => {
      const from = plusDays(p.start, fromOffset);
      const to = plusDays(from, length);
      const latest = (a: string, b: string) => (a > b ? a : b);
      const ends = endsDelta === null ? null : latest(p.start, plusDays(from, endsDelta));
      const exceptions = new Set(exceptionOffsets.map((n) => plusDays(from, n)));
      const exportFrom = latest(p.start, plusDays(from, -lead));
      return { p: { ...p, ends, exceptions }, from, to, exportFrom, tz, minutes };
    }),
);

describe('toRRule text read back by rrulestr gives the engine’s dates', () => {
  let savedTz: string | undefined;
  beforeAll(() => {
    // rrule.js converts TZID times using the host zone; pin it so results are instants.
    savedTz = process.env.TZ;
    process.env.TZ = 'UTC';
    expect(Intl.DateTimeFormat().resolvedOptions().timeZone).toMatch(/^(UTC|Etc\/UTC)$/);
  });
  afterAll(() => {
    if (savedTz === undefined) delete process.env.TZ;
    else process.env.TZ = savedTz;
  });

  it('for random patterns, zones and times', () => {
    fc.assert(
      fc.property(textCaseArb, ({ p, from, to, exportFrom, tz, minutes }) => {
        const text = toRRule(p, { date: exportFrom, minutes, timezone: tz });
        const rangeFrom = from > exportFrom ? from : exportFrom;
        const expected = rangeFrom <= to ? occurrencesBetween(p, rangeFrom, to) : [];
        expect(datesFromText(text, tz, from, to), text).toEqual(expected);

        // RFC 5545 counts DTSTART as an instance, so it must be one the engine
        // produces, or one that EXDATE removes.
        const dtstart = /^DTSTART(?:;TZID=[^:]+)?:(\d{4})(\d{2})(\d{2})T/.exec(text);
        expect(dtstart, text).not.toBeNull();
        const dtstartDate = `${dtstart?.[1]}-${dtstart?.[2]}-${dtstart?.[3]}`;
        const exdateLine = text.split('\n').find((l) => l.startsWith('EXDATE')) ?? '';
        const removed = exdateLine.includes(dtstartDate.replaceAll('-', ''));
        expect(isOccurrence(p, dtstartDate) || removed, text).toBe(true);
      }),
      params,
    );
  });
});
