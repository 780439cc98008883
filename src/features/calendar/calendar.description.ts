import type { SessionRow } from '../../storage/tables.js';
import { parseJson } from '../../storage/columns.js';

/*
 * What a feed's VEVENT says besides its title: DESCRIPTION (type, duration, what is
 * blocked, and the session's link) and URL (the link). The link is the web app's page of
 * the session, `<PUBLIC_URL>/sessions/<id>`, written only when PUBLIC_URL is set: a feed
 * is fetched by a calendar app, whose request names no origin worth linking to.
 */

export type DescribedSession = Pick<SessionRow, 'id' | 'type' | 'duration' | 'website_blocker_enabled' | 'website_blocker' | 'snooze_enabled' | 'snooze_apps'>;

/** The web app's page of a session, or null without PUBLIC_URL. */
export const sessionLink = (publicUrl: string | null, id: number): string | null => (publicUrl === null ? null : `${publicUrl}/sessions/${id}`);

/** A feed's address for calendar apps that subscribe on a click (`webcal://`), or null without PUBLIC_URL. */
export const webcalUrl = (publicUrl: string | null, path: string): string | null => (publicUrl === null ? null : `${publicUrl.replace(/^https?:/, 'webcal:')}${path}`);

const minutes = (n: number) => (n === 1 ? '1 minute' : `${n} minutes`);

/** What the website blocker blocks: its categories and how many sites of its own, or "off". */
function blockerLine(s: DescribedSession): string {
  const blocker = s.website_blocker_enabled === 1 && s.website_blocker !== null ? parseJson(s.website_blocker) : null;
  if (blocker === null) return 'Website blocker: off';
  const parts = [...blocker.category];
  if (blocker.urls.length > 0) parts.push(blocker.urls.length === 1 ? '1 site' : `${blocker.urls.length} sites`);
  return `Website blocker: ${parts.length === 0 ? 'on' : parts.join(', ')}`;
}

/** The apps notifications are snoozed for, or "off". */
function snoozeLine(s: DescribedSession): string {
  const apps = s.snooze_enabled === 1 ? Object.entries(parseJson(s.snooze_apps)).filter(([, on]) => on).map(([app]) => app) : [];
  return `Snoozed apps: ${apps.length === 0 ? 'off' : apps.join(', ')}`;
}

/** The DESCRIPTION's text, one fact a line, before escaping. */
export function describeSession(s: DescribedSession, publicUrl: string | null): string {
  const lines = [`${s.type === 'drop-in' ? 'Drop-in' : 'Standard'} focus session, ${minutes(s.duration)}.`, blockerLine(s), snoozeLine(s)];
  const link = sessionLink(publicUrl, s.id);
  if (link !== null) lines.push(link);
  return lines.join('\n');
}
