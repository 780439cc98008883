/**
 * Dates as the API writes them (`YYYY-MM-DD`) and week arithmetic on them. Plain dates are
 * computed in UTC so that no daylight-saving shift moves a day; instants are shown in the
 * person's home zone through Intl.
 */

const pad = (n: number) => String(n).padStart(2, '0');

const ZONES: string[] = (() => {
  try {
    return Intl.supportedValuesOf('timeZone');
  } catch {
    return ['UTC'];
  }
})();

/** The IANA zones the browser knows, led by any of `also` it does not list (Chromium lists no "UTC"). */
export function timeZones(...also: string[]): string[] {
  return [...new Set(also.filter((zone) => !ZONES.includes(zone))), ...ZONES];
}

export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/** The local date of an instant in a zone. */
export function dateIn(instant: Date | string, zone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(new Date(instant));
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')}`;
}

/**
 * Where a new session on `date` starts unless the person says otherwise: 09:00, but on today's
 * date the next half hour at least 5 minutes ahead (09:00 would mostly be past), or tomorrow
 * at 09:00 once today has no such half hour left.
 */
export function newSessionStart(date: string, zone: string, now = new Date()): { date: string; time: string } {
  if (date !== dateIn(now, zone)) return { date, time: '09:00' };
  const parts = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(now);
  const minutes = Number(parts.find((p) => p.type === 'hour')?.value) * 60 + Number(parts.find((p) => p.type === 'minute')?.value);
  const next = Math.ceil((minutes + 5) / 30) * 30;
  return next >= 24 * 60 ? { date: addDays(date, 1), time: '09:00' } : { date, time: `${pad(Math.floor(next / 60))}:${pad(next % 60)}` };
}

/** Monday of the week holding `date` (weeks start on Monday, as the statistics'). */
export function weekStart(date: string): string {
  const weekday = new Date(`${date}T00:00:00Z`).getUTCDay();
  return addDays(date, -((weekday + 6) % 7));
}

export const isDate = (value: string | null): value is string => value !== null && /^\d{4}-\d{2}-\d{2}$/.test(value);

export function dayLabel(date: string, style: 'long' | 'short' = 'long'): string {
  return new Date(`${date}T00:00:00Z`).toLocaleDateString('en-US', { timeZone: 'UTC', weekday: style, month: style === 'long' ? 'long' : 'short', day: 'numeric' });
}

/** `"2026-11-04"` → `"Nov 4"`: a chart's day tick. */
export function monthDay(date: string): string {
  return new Date(`${date}T00:00:00Z`).toLocaleDateString('en-US', { timeZone: 'UTC', month: 'short', day: 'numeric' });
}

/** `"Dec 8, 2026, 3:00 PM"` in `zone`: the home zone, or the browser's for someone not signed in. */
export function dateTimeIn(instant: string, zone?: string): string {
  return new Date(instant).toLocaleString('en-US', { timeZone: zone, dateStyle: 'medium', timeStyle: 'short' });
}

export function timeIn(instant: string, zone: string): string {
  return new Date(instant).toLocaleTimeString('en-US', { timeZone: zone, hour: 'numeric', minute: '2-digit' });
}

/** `"9:00 AM"` → `"09:00"` for an <input type="time">. */
export function to24h(time: string): string {
  const match = /^(\d{1,2}):(\d{2})\s*(AM|PM)$/i.exec(time.trim());
  if (!match) return time;
  const hour = (Number(match[1]) % 12) + (match[3]?.toUpperCase() === 'PM' ? 12 : 0);
  return `${pad(hour)}:${match[2]}`;
}

/** `"21:30"` → `"9:30 PM"`, the form every version of the API accepts. */
export function to12h(time: string): string {
  const match = /^(\d{1,2}):(\d{2})/.exec(time);
  if (!match) return time;
  const hour = Number(match[1]);
  return `${hour % 12 === 0 ? 12 : hour % 12}:${match[2]} ${hour < 12 ? 'AM' : 'PM'}`;
}

/** `1h 05m 09s`-style text for a countdown. */
export function countdown(ms: number): string {
  const total = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return h > 0 ? `${h} h ${pad(m)} min ${pad(s)} s` : `${m} min ${pad(s)} s`;
}
