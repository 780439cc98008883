import ical, { ICalEventStatus } from 'ical-generator';
import type { SessionRow } from '../../storage/tables.js';
import { vtimezone } from './calendar.vtimezone.js';

/*
 * A feed's iCalendar text, written by ical-generator (escaping, folding at 75 octets, CRLF)
 * from the sessions as stored. One VEVENT per session:
 *
 * - UID `session-<id>@focus`: stable for the session's life, whatever the host name.
 * - DTSTART;TZID= at the session's wall time in its zone (a `Z` time for UTC), with a
 *   VTIMEZONE per zone (calendar.vtimezone.ts); for a series, the first occurrence.
 * - DTEND: the first occurrence's end. RFC 5545 gives every recurrence the same exact
 *   duration, as the API does (a session lasts `duration` minutes of elapsed time).
 * - RRULE and EXDATE: the lines the sessions feature keeps in `rrule` with every change
 *   (recurrence.rrule.ts says how they mean exactly the engine's dates); EXDATE lists the
 *   removed occurrences.
 * - SEQUENCE: the session's change counter; LAST-MODIFIED and DTSTAMP: its updated_at
 *   (a calendar without METHOD revises DTSTAMP with the data, RFC 5545 §3.8.7.2), so the
 *   same sessions always make the same bytes and the ETag holds.
 */

export type FeedSession = Pick<
  SessionRow,
  'id' | 'name' | 'type' | 'timezone' | 'schedule' | 'time_minutes' | 'duration' | 'starts_at' | 'ends_at' | 'rrule' | 'status' | 'created_at' | 'updated_at' | 'sequence'
>;

interface Wall {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/**
 * A wall-clock time in a zone, shaped as the Temporal.ZonedDateTime ical-generator
 * accepts: it writes these fields as they are, never through the server's own zone.
 */
function zoned(wall: Wall, timeZoneId: string, epochMilliseconds: number) {
  const text = `${pad(wall.year, 4)}-${pad(wall.month)}-${pad(wall.day)}T${pad(wall.hour)}:${pad(wall.minute)}:00`;
  const plainDate = { year: wall.year, month: wall.month, day: wall.day, toJSON: () => text.slice(0, 10), toString: () => text.slice(0, 10) };
  const value = {
    ...wall,
    second: 0,
    timeZoneId,
    toInstant: () => ({ epochMilliseconds, toJSON: () => new Date(epochMilliseconds).toISOString(), toString: () => new Date(epochMilliseconds).toISOString(), toZonedDateTimeISO: () => value }),
    toPlainDateTime: () => ({ ...wall, second: 0, toJSON: () => text, toString: () => text, toPlainDate: () => plainDate, toZonedDateTime: () => value }),
    toJSON: () => text,
    toString: () => text,
    // Each value is only ever written in its own zone (the event's).
    withTimeZone: () => value,
  };
  return value;
}

/** One formatter per zone: building one costs far more than using it. */
const formatters = new Map<string, Intl.DateTimeFormat>();

/** The wall clock in `timezone` at an instant. */
function wallAt(ms: number, timezone: string): Wall {
  let format = formatters.get(timezone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-US', { timeZone: timezone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric' });
    if (formatters.size >= 1000) formatters.clear();
    formatters.set(timezone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(new Date(ms)).map((p) => [p.type, p.value]));
  return { year: Number(parts.year), month: Number(parts.month), day: Number(parts.day), hour: Number(parts.hour), minute: Number(parts.minute) };
}

/** The first occurrence's local date: a series' DTSTART line, a one-off session's schedule. */
function firstDate(s: FeedSession): string {
  const dtstart = s.rrule === null ? undefined : /^DTSTART[^:]*:(\d{4})(\d{2})(\d{2})T/m.exec(s.rrule);
  return dtstart === undefined || dtstart === null ? s.schedule : `${dtstart[1]}-${dtstart[2]}-${dtstart[3]}`;
}

/** RRULE and EXDATE of a series: its stored lines without DTSTART, which the event carries. */
const recurrenceLines = (rrule: string) =>
  rrule
    .split('\n')
    .filter((line) => !line.startsWith('DTSTART'))
    .join('\n');

const sameWall = (a: Wall, b: Wall) => a.year === b.year && a.month === b.month && a.day === b.day && a.hour === b.hour && a.minute === b.minute;

/**
 * True when a wall time does not name exactly its instant: it falls in a DST gap (the
 * API moved it forward) or in an overlap (the API took the first of two). RFC 5545 reads
 * such times as the API does, but not every reader does (ical.js 2.2 reads a gap time an
 * hour early and an overlap time as the second), so a one-off session there is written in
 * UTC: the same instant for everyone.
 */
function ambiguous(wall: Wall, startMs: number, timezone: string): boolean {
  if (!sameWall(wallAt(startMs, timezone), wall)) return true;
  return [30, 60, 120].some((minutes) => sameWall(wallAt(startMs + minutes * 60_000, timezone), wall));
}

export interface FeedText {
  name: string;
  sessions: readonly FeedSession[];
  now?: Date;
}

/**
 * An RFC 5545 TEXT value (section 3.3.11): ical-generator escapes event properties but
 * writes the calendar's NAME and X-WR-CALNAME as given, so a line break or `;` in a feed's
 * name broke the feed (or added events to it). Control characters other than line breaks
 * have no escape in TEXT and are left out; names stored before they were refused may hold some.
 */
function text(value: string): string {
  return value
    .replace(/[\\;,]/g, (c) => `\\${c}`)
    .replace(/\r\n|[\r\n]/g, '\\n')
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001F\u007F]/g, '');
}

export function buildIcs(feed: FeedText): string {
  const fromYear = new Map<string, number>();
  for (const s of feed.sessions) {
    const year = Number(firstDate(s).slice(0, 4));
    fromYear.set(s.timezone, Math.min(year, fromYear.get(s.timezone) ?? year));
  }
  const calendar = ical({
    prodId: '//Focus//Focus calendar feed//EN',
    name: text(feed.name),
    // No calendar-wide zone (times outside events stay UTC); a VTIMEZONE per zone events use.
    timezone: { name: null, generator: (zone) => vtimezone(zone, fromYear.get(zone) ?? new Date().getUTCFullYear(), feed.now) },
  });
  for (const s of feed.sessions) {
    const date = firstDate(s);
    const wall = { year: Number(date.slice(0, 4)), month: Number(date.slice(5, 7)), day: Number(date.slice(8, 10)), hour: Math.floor(s.time_minutes / 60), minute: s.time_minutes % 60 };
    const startMs = Date.parse(s.starts_at);
    const endMs = Date.parse(s.ends_at);
    const zone = s.rrule === null && ambiguous(wall, startMs, s.timezone) ? 'UTC' : s.timezone;
    calendar.createEvent({
      id: `session-${s.id}@focus`,
      timezone: zone,
      start: zone === 'UTC' ? zoned(wallAt(startMs, 'UTC'), 'UTC', startMs) : zoned(wall, zone, startMs),
      end: zoned(wallAt(endMs, zone), zone, endMs),
      summary: s.name,
      status: ICalEventStatus.CONFIRMED,
      sequence: s.sequence,
      stamp: s.updated_at,
      created: s.created_at,
      lastModified: s.updated_at,
      ...(s.rrule === null ? {} : { repeating: recurrenceLines(s.rrule) }),
    });
  }
  // Every content line ends with CRLF (RFC 5545 section 3.1), the last one too.
  const ics = calendar.toString();
  return ics.endsWith('\r\n') ? ics : `${ics}\r\n`;
}
