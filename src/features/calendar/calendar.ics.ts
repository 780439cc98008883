import { setImmediate as nextTurn } from 'node:timers/promises';
import type { SessionRow } from '../../storage/tables.js';
import { type DescribedSession, describeSession, sessionLink } from './calendar.description.js';
import { offsetAt, vtimezone } from './calendar.vtimezone.js';

/*
 * A feed's iCalendar text (RFC 5545: escaped TEXT values, lines folded at 75 octets, CRLF)
 * from the sessions as stored. Written here line by line, in the form ical-generator wrote
 * it before: that library folded by allocating an encoder per character, which made a feed
 * with many zones cost seconds of the event loop. One VEVENT per session:
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
 * - DESCRIPTION and URL: calendar.description.ts (the link only with PUBLIC_URL).
 * - An edited occurrence of a series: a VEVENT of the same UID with RECURRENCE-ID (the
 *   day's original wall time in the series' zone) and its own DTSTART, DTEND and text.
 */

type EventRow = DescribedSession &
  Pick<SessionRow, 'name' | 'timezone' | 'schedule' | 'time_minutes' | 'starts_at' | 'ends_at' | 'rrule' | 'status' | 'created_at' | 'updated_at' | 'sequence'>;

/** A session of a feed, with a series' edited occurrences (each the session as that day shows it, at its instants). */
export type FeedSession = EventRow & { edited?: readonly { occurrence_date: string; session: EventRow }[] };

interface Wall {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** The wall clock in `timezone` at an instant, from the zone's cached offsets (calendar.vtimezone.ts). */
function wallAt(ms: number, timezone: string): Wall {
  const d = new Date(ms + (timezone === 'UTC' ? 0 : offsetAt(timezone, ms)) * 60_000);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes() };
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
  /** PUBLIC_URL: links to the sessions in DESCRIPTION and URL; none when null. */
  publicUrl: string | null;
  now?: Date;
}

/**
 * An RFC 5545 TEXT value (section 3.3.11): `\\`, `;` and `,` escaped, line breaks as `\\n`.
 * Other control characters (C0, DEL, C1) have no escape in TEXT and are left out: a name
 * stored before they were refused, or typed through another way in, must not reach a
 * calendar app as a raw VT or ESC.
 */
export function icsText(value: string): string {
  return value
    .replace(/[\\;,]/g, (c) => `\\${c}`)
    .replace(/\r\n|[\r\n]/g, '\\n')
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001F\u007F-\u009F]/g, '');
}

/** Octets of one character in UTF-8 (a surrogate pair is one character of 4). */
const octets = (c: string) => (c.length > 1 ? 4 : c <= '\u007F' ? 1 : c <= '\u07FF' ? 2 : 3);

/** A content line folded so that no line exceeds 75 octets (RFC 5545 section 3.1), a continuation starting with a space. */
function fold(line: string): string {
  if (line.length <= 74 && !/[\u0080-\uFFFF]/.test(line)) return line;
  let out = '';
  let used = 0;
  for (const c of line) {
    const size = octets(c);
    used += size;
    if (used > 74) {
      out += '\r\n ';
      used = size;
    }
    out += c;
  }
  return out;
}

/** The date part of a wall clock. */
const dateWall = (date: string) => ({ year: Number(date.slice(0, 4)), month: Number(date.slice(5, 7)), day: Number(date.slice(8, 10)) });

/** `YYYYMMDDTHHMMSS` of a wall clock. */
const wallText = (w: Wall) => `${pad(w.year, 4)}${pad(w.month)}${pad(w.day)}T${pad(w.hour)}${pad(w.minute)}00`;

/** A UTC date-time value (`…Z`) of an ISO instant, seconds included. */
const utcText = (iso: string) => `${new Date(iso).toISOString().slice(0, 19).replace(/[-:]/g, '')}Z`;

/** A date-time property at a wall time in `zone`: with TZID, or as UTC for the zone `UTC`. */
const dateTime = (name: string, zone: string, wall: Wall) => (zone === 'UTC' ? `${name}:${wallText(wall)}Z` : `${name};TZID=${zone}:${wallText(wall)}`);

/** The lines of one session's VEVENT (`recurrenceId`: of one edited occurrence of a series). */
function eventLines(s: EventRow, zone: string, start: Wall, end: Wall, publicUrl: string | null, recurrenceId?: Wall): string[] {
  const lines = [`BEGIN:VEVENT`, `UID:session-${s.id}@focus`, `SEQUENCE:${s.sequence}`, `DTSTAMP:${utcText(s.updated_at)}`, dateTime('DTSTART', zone, start), dateTime('DTEND', zone, end)];
  if (recurrenceId !== undefined) lines.push(dateTime('RECURRENCE-ID', zone, recurrenceId));
  else if (s.rrule !== null) {
    const recurrence = recurrenceLines(s.rrule).split(/\r?\n/).filter((line) => line !== '');
    lines.push(...(recurrence.length === 1 && !recurrence[0]?.startsWith('RRULE:') ? [`RRULE:${recurrence[0] ?? ''}`] : recurrence.map((line) => line.trim())));
  }
  lines.push(`SUMMARY:${icsText(s.name)}`, `DESCRIPTION:${icsText(describeSession(s, publicUrl))}`);
  const link = sessionLink(publicUrl, s.id);
  // A URI value (RFC 5545 §3.3.13), not TEXT: written as is; PUBLIC_URL was checked at start.
  if (link !== null) lines.push(`URL:${link}`);
  lines.push('STATUS:CONFIRMED', `CREATED:${utcText(s.created_at)}`, `LAST-MODIFIED:${utcText(s.updated_at)}`, 'END:VEVENT');
  return lines;
}

/** The zones a feed's sessions are written in, for prepareZones before buildIcs. */
export const zonesOf = (sessions: readonly FeedSession[]) => new Set(sessions.map((s) => s.timezone).filter((zone) => zone !== 'UTC'));

/** Events written between turns of the event loop: a few milliseconds of work. */
const EVENTS_PER_TURN = 100;

/**
 * The feed's text, linear in the sessions: every zone's definition is computed once per
 * process (prepareZones first keeps that off other requests' way), and the events are
 * written EVENTS_PER_TURN at a time, giving the event loop a turn in between.
 */
export async function buildIcs(feed: FeedText): Promise<string> {
  const fromYear = new Map<string, number>();
  for (const s of feed.sessions) {
    const year = Number(firstDate(s).slice(0, 4));
    fromYear.set(s.timezone, Math.min(year, fromYear.get(s.timezone) ?? year));
  }
  const events: string[] = [];
  // A VTIMEZONE per zone events are written in, in order of first use; no calendar-wide zone.
  const used = new Set<string>();
  for (const [i, s] of feed.sessions.entries()) {
    if (i > 0 && i % EVENTS_PER_TURN === 0) await nextTurn();
    const date = firstDate(s);
    const wall = { ...dateWall(date), hour: Math.floor(s.time_minutes / 60), minute: s.time_minutes % 60 };
    const startMs = Date.parse(s.starts_at);
    const zone = s.rrule === null && ambiguous(wall, startMs, s.timezone) ? 'UTC' : s.timezone;
    if (zone !== 'UTC') used.add(zone);
    const start = zone === 'UTC' ? wallAt(startMs, 'UTC') : wall;
    events.push(...eventLines(s, zone, start, wallAt(Date.parse(s.ends_at), zone), feed.publicUrl).map(fold));
    for (const { occurrence_date: day, session: o } of s.edited ?? []) {
      const original = { ...dateWall(day), hour: wall.hour, minute: wall.minute };
      const at = (iso: string) => wallAt(Date.parse(iso), zone);
      events.push(...eventLines(o, zone, at(o.starts_at), at(o.ends_at), feed.publicUrl, original).map(fold));
    }
  }
  const now = feed.now ?? new Date();
  const zones = [...used].flatMap((zone) => vtimezone(zone, fromYear.get(zone) ?? now.getUTCFullYear(), now) ?? []);
  const name = icsText(feed.name);
  const head = ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//Focus//Focus calendar feed//EN', fold(`NAME:${name}`), fold(`X-WR-CALNAME:${name}`)];
  // Every content line ends with CRLF (RFC 5545 section 3.1), the last one too.
  return [...head, ...zones, ...events, 'END:VCALENDAR', ''].join('\r\n');
}
