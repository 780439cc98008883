/**
 * Local wall-clock time ↔ UTC instants, and the 12-hour time format.
 *
 * DST rules (RFC 5545 §3.3.5, same as Temporal's "compatible" disambiguation):
 *
 * - Wall-clock time is what repeats. A 9:00 AM series is 9:00 AM local on
 *   every day; across a DST change its UTC instant moves by the shift.
 * - A local time that does not exist (spring-forward gap) is moved forward
 *   by the length of the gap: it is read with the offset in force BEFORE
 *   the gap. 2:30 AM in New York on 2026-03-08 → 3:30 AM EDT (07:30Z);
 *   2:15 AM on Lord Howe Island on 2026-10-04 (30-minute gap) → 2:45 AM.
 * - A local time that exists twice (fall-back overlap) is the FIRST, i.e.
 *   earlier, instant (still daylight time). 1:30 AM in New York on
 *   2026-11-01 → 1:30 AM EDT (05:30Z), not EST (06:30Z).
 *
 * Why not luxon's `DateTime.fromObject({...}, { zone })`: verified with luxon
 * 3.7.2, it resolves gaps forward correctly but resolves overlaps from a
 * provisional offset taken at the CURRENT moment (`zone.offset(Settings.now())`),
 * so the answer for 1:30 AM on 2026-11-01 depends on whether the server
 * happens to run in summer or winter (run in November it returned EST/06:30Z,
 * the later instant, and 2:30 AM Berlin on 2026-10-25 likewise the later
 * +01:00). We therefore resolve ourselves and use luxon only for what it does
 * deterministically: zone validation and "what is the offset at instant X".
 *
 * Assumption: a zone changes offset at most once within ±1 day of the time
 * being resolved (true for every zone in current tzdata).
 */
import { IANAZone } from 'luxon';
import { MAX_DAY_NUMBER, MIN_DAY_NUMBER, daysFromCivil, fromDayNumber, requireDate } from './recurrence.dates.js';
import { ZONE_NAMES_ICU_RENAMES } from './recurrence.zone-names.js';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
const MINUTES_PER_DAY = 1440;

/**
 * Shape of an IANA zone name: "UTC", "Europe/Berlin", "America/Argentina/Buenos_Aires",
 * "Etc/GMT+5". It deliberately excludes offset strings such as "+02:00": newer
 * V8 versions accept those as time zones, and we want the same answer on
 * every Node version; a fixed offset also cannot follow a place's DST rules,
 * which is the point of storing a zone.
 */
const ZONE_NAME_SHAPE = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;

/**
 * Zones found valid, by name. Validation builds an Intl.DateTimeFormat (~0.1 ms), and
 * listings validated the zone of every record they rendered. Bounded because names
 * match case-insensitively (many spellings of one zone).
 */
const zoneCache = new Map<string, IANAZone>();

/**
 * True for IANA zone names the runtime knows (including links such as
 * "US/Eastern" and "UTC"). Matching is case-insensitive because that is how
 * ICU looks names up; callers that store the value may canonicalise it.
 * Rejects "", unknown names ("Mars/Base") and fixed offsets ("+02:00").
 */
export function isValidTimeZone(tz: string): boolean {
  if (zoneCache.has(tz)) return true;
  const valid = typeof tz === 'string' && tz.length <= 64 && ZONE_NAME_SHAPE.test(tz) && IANAZone.isValidZone(tz);
  if (valid) {
    if (zoneCache.size >= 1_000) zoneCache.clear();
    zoneCache.set(tz, IANAZone.create(tz));
  }
  return valid;
}

/** What a 422 says of a `timezone` that {@link canonicalTimeZone} does not know: the one wording. */
export const NOT_A_TIME_ZONE = 'is not an IANA time zone (such as "Europe/Berlin" or "UTC")';

const RENAMED_BY_CASE = new Map(ZONE_NAMES_ICU_RENAMES.map((name) => [name.toLowerCase(), name]));

/**
 * The spelling to store for a zone name, or undefined when it is not one. Names match
 * case-insensitively, so the runtime's own spelling is kept ("europe/berlin" →
 * "Europe/Berlin"), as do names the runtime resolves to another ("asia/kolkata" →
 * "Asia/Kolkata", not "Asia/Calcutta"); links keep their own name ("US/Eastern" stays, not
 * "America/New_York"): the name a user chose is the one they see again.
 */
export function canonicalTimeZone(tz: string): string | undefined {
  if (!isValidTimeZone(tz)) return undefined;
  const resolved = new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;
  if (resolved.toLowerCase() === tz.toLowerCase()) return resolved;
  // A name the runtime resolves to another one ("asia/kolkata" → Asia/Calcutta): its IANA spelling.
  return RENAMED_BY_CASE.get(tz.toLowerCase()) ?? tz;
}

function requireZone(tz: string): IANAZone {
  if (!isValidTimeZone(tz)) throw new RangeError(`not a valid IANA time zone: ${JSON.stringify(tz)}`);
  return zoneCache.get(tz) ?? IANAZone.create(tz);
}

function requireMinutes(minutes: number): void {
  if (!Number.isInteger(minutes) || minutes < 0 || minutes >= MINUTES_PER_DAY) {
    throw new RangeError(`minutes after midnight must be an integer 0..1439, got ${minutes}`);
  }
}

/**
 * A zone's offsets over one UTC day: the one at its start, the one at the next day's start,
 * and the instant between them when they differ (Infinity when they do not). Exact under
 * this module's assumption of at most one change within a day.
 */
interface DayOffsets {
  first: number;
  last: number;
  change: number;
}

/**
 * Offsets by zone and UTC day. luxon reads an offset through Intl's formatToParts (tens of
 * microseconds), and resolving one local time takes three or four: building the occurrence
 * index of a series asked for thousands (docs/performance.md). Cleared when full.
 */
const dayOffsets = new Map<IANAZone, Map<number, DayOffsets>>();
let dayOffsetCount = 0;
const MAX_DAY_OFFSETS = 100_000;

function offsetsOfDay(zone: IANAZone, day: number): DayOffsets {
  const start = day * DAY_MS;
  const end = start + DAY_MS;
  const first = zone.offset(start) * MINUTE_MS;
  const last = zone.offset(end) * MINUTE_MS;
  if (first === last) return { first, last, change: Infinity };
  // The first millisecond in (start, end] with the later offset, by bisection.
  let before = start;
  let after = end;
  while (after - before > 1) {
    const mid = Math.floor((before + after) / 2);
    if (zone.offset(mid) * MINUTE_MS === first) before = mid;
    else after = mid;
  }
  return { first, last, change: after };
}

/** Offset of `zone` from UTC at instant `ms`, in milliseconds (east positive). */
function offsetMs(zone: IANAZone, ms: number): number {
  const day = Math.floor(ms / DAY_MS);
  let days = dayOffsets.get(zone);
  if (days === undefined) dayOffsets.set(zone, (days = new Map<number, DayOffsets>()));
  let offsets = days.get(day);
  if (offsets === undefined) {
    offsets = offsetsOfDay(zone, day);
    if (dayOffsetCount >= MAX_DAY_OFFSETS) {
      dayOffsets.clear();
      dayOffsets.set(zone, (days = new Map<number, DayOffsets>()));
      dayOffsetCount = 0;
    }
    days.set(day, offsets);
    dayOffsetCount++;
  }
  return ms < offsets.change ? offsets.first : offsets.last;
}

/** Offset of `timezone` from UTC at instant `ms`, in milliseconds (east positive). */
export function zoneOffsetMs(timezone: string, ms: number): number {
  return offsetMs(requireZone(timezone), ms);
}

/**
 * Epoch milliseconds of local `date` + `minutes` in `timezone`, applying the
 * DST rules in this module's doc comment.
 *
 * `wall` is the local time read as if it were UTC. A true instant for it is
 * `wall - offset` where the offset in force at that instant equals `offset`.
 * The only offsets that can be in force are the ones a day before and a day
 * after, so we test both: two matches = overlap (take the earlier instant),
 * one = the normal case, none = gap (use the pre-gap offset, which lands
 * `gap length` later on the wall clock).
 */
export function localToEpochMillis(date: string, minutes: number, timezone: string): number {
  const key = `${timezone}|${date}|${minutes}`;
  const memo = instantCache.get(key);
  if (memo !== undefined) return memo;
  const instant = resolveLocal(date, minutes, timezone);
  if (instantCache.size >= 50_000) instantCache.clear();
  instantCache.set(key, instant);
  return instant;
}

/**
 * Resolved local times: a pure function of its key, and listings ask for the same
 * (zone, day, time) over and over — each miss costs three luxon offset look-ups
 * (Intl formatToParts). Cleared when full: a bounded size with no bookkeeping.
 */
const instantCache = new Map<string, number>();

function resolveLocal(date: string, minutes: number, timezone: string): number {
  const d = requireDate(date);
  requireMinutes(minutes);
  const zone = requireZone(timezone);
  const wall = daysFromCivil(d.year, d.month, d.day) * DAY_MS + minutes * MINUTE_MS;
  const before = offsetMs(zone, wall - DAY_MS);
  const after = offsetMs(zone, wall + DAY_MS);
  const valid = [before, after]
    .map((offset) => ({ offset, instant: wall - offset }))
    .filter(({ offset, instant }) => offsetMs(zone, instant) === offset)
    .map(({ instant }) => instant);
  return valid.length > 0 ? Math.min(...valid) : wall - before;
}

/** `Date.prototype.toISOString()` of local `date` + `minutes` in `timezone` (DST rules above). */
export function localToInstant(date: string, minutes: number, timezone: string): string {
  return new Date(localToEpochMillis(date, minutes, timezone)).toISOString();
}

export interface OccurrenceInstants {
  starts_at: string;
  ends_at: string;
}

/**
 * UTC start and end of one occurrence. The end is `duration` minutes of
 * elapsed (absolute) time after the start, so a 60-minute session starting at
 * 1:30 AM EDT on a fall-back night ends at 1:30 AM EST, and a session may end
 * on the next local day.
 */
export function occurrenceInstants(
  date: string,
  minutes: number,
  duration: number,
  timezone: string,
): OccurrenceInstants {
  if (!Number.isInteger(duration) || duration < 1 || duration > MINUTES_PER_DAY) {
    throw new RangeError(`duration must be an integer 1..1440 minutes, got ${duration}`);
  }
  const key = `${timezone}|${date}|${minutes}|${duration}`;
  let instants = occurrenceCache.get(key);
  if (instants === undefined) {
    const start = localToEpochMillis(date, minutes, timezone);
    instants = {
      starts_at: new Date(start).toISOString(),
      ends_at: new Date(start + duration * MINUTE_MS).toISOString(),
    };
    if (occurrenceCache.size >= 50_000) occurrenceCache.clear();
    occurrenceCache.set(key, instants);
  }
  // A copy: callers may extend or change what they get.
  return { starts_at: instants.starts_at, ends_at: instants.ends_at };
}

/** Listings format the same occurrences over and over; two toISOString calls each were a visible share of a range listing. */
const occurrenceCache = new Map<string, OccurrenceInstants>();

/**
 * Every record of a series shown as a whole asks for its zone's today; the answer is the
 * same for a minute (a local day changes at a whole minute in every zone).
 */
const todayCache = new Map<string, string>();

/** The local calendar date in `timezone` at instant `now` (default: the current time). */
export function todayIn(timezone: string, now: Date = new Date()): string {
  const ms = now.getTime();
  if (Number.isNaN(ms)) throw new RangeError('now must be a valid Date');
  const key = `${timezone}|${Math.floor(ms / MINUTE_MS)}`;
  const cached = todayCache.get(key);
  if (cached !== undefined) return cached;
  const zone = requireZone(timezone);
  const day = fromDayNumber(Math.min(Math.max(Math.floor((ms + offsetMs(zone, ms)) / DAY_MS), MIN_DAY_NUMBER), MAX_DAY_NUMBER));
  if (todayCache.size >= 10_000) todayCache.clear();
  todayCache.set(key, day);
  return day;
}

/** `h:mm AM` / `hh:mm PM`; hours 1–12, minutes 00–59, AM/PM in any case, exactly one space. */
const TIME_12H = /^(\d{1,2}):([0-5]\d) ([AaPp][Mm])$/;

/**
 * Parses a 12-hour clock time into minutes after midnight, or null.
 * "12:00 AM" = 0 (midnight), "12:30 PM" = 750 (half past noon).
 */
export function parseTime12h(s: string): number | null {
  const m = TIME_12H.exec(s);
  if (!m) return null;
  const hour = Number(m[1]);
  const minute = Number(m[2]);
  if (hour < 1 || hour > 12) return null;
  const pm = m[3]?.toUpperCase() === 'PM';
  // 12 AM is hour 0 and 12 PM is hour 12: take hour mod 12, then add 12 for PM.
  return ((hour % 12) + (pm ? 12 : 0)) * 60 + minute;
}

/** `H:mm` / `HH:mm` on the 24-hour clock: hours 0–23, minutes 00–59. */
const TIME_24H = /^([01]?\d|2[0-3]):([0-5]\d)$/;
/** A `time` as the API takes it, 12-hour ("9:00 AM") or 24-hour ("09:00", "21:30"), in minutes after midnight; null if neither. */
export function parseTimeInput(s: string): number | null {
  const m = TIME_24H.exec(s);
  return m === null ? parseTime12h(s) : Number(m[1]) * 60 + Number(m[2]);
}

/** Minutes after midnight (0..1439) as `h:mm AM`, e.g. 0 → "12:00 AM", 750 → "12:30 PM". */
export function formatTime12h(minutes: number): string {
  requireMinutes(minutes);
  const hour24 = Math.floor(minutes / 60);
  const hour12 = hour24 % 12 === 0 ? 12 : hour24 % 12;
  return `${hour12}:${String(minutes % 60).padStart(2, '0')} ${hour24 < 12 ? 'AM' : 'PM'}`;
}
