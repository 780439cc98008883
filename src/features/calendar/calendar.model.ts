import type { CalendarFeedRow } from '../../storage/tables.js';
import { webcalUrl } from './calendar.description.js';
import type { CalendarFeed, CreatedCalendarFeed } from './calendar.schema.js';

/** The one place a feed row becomes its API record; the secret is never in a row. */
export function toCalendarFeed(row: Pick<CalendarFeedRow, 'id' | 'name' | 'created_at'>): CalendarFeed {
  return { id: row.id, name: row.name, created_at: row.created_at };
}

/** The record answered once, on create: the only place the secret appears (`webcal_url` too, with PUBLIC_URL). */
export function toCreatedCalendarFeed(row: Pick<CalendarFeedRow, 'id' | 'name' | 'created_at'>, secret: string, publicUrl: string | null): CreatedCalendarFeed {
  const webcal = webcalUrl(publicUrl, feedPath(secret));
  return { ...toCalendarFeed(row), url: feedPath(secret), ...(webcal === null ? {} : { webcal_url: webcal }) };
}

export const feedPath = (secret: string) => `/ical/${secret}.ics`;
