import ICAL from 'ical.js';
import { expect, it } from 'vitest';
import { type Client, describeEachDialect, useTestApp } from '../../../test/helpers/harness.js';
import { createSession } from '../sessions/sessions.test-helpers.js';

/*
 * Contract section 10, "Calendar feed content": DESCRIPTION (type, duration, blockers, and
 * the session's link with PUBLIC_URL), URL (the link, with PUBLIC_URL only), and
 * `webcal_url` on create (with PUBLIC_URL only). Text stays escaped; a change of any of
 * those fields changes the feed (its rendered copy is not served stale).
 */

async function feedOf(client: Client) {
  const res = await client.post<{ data: { url: string; webcal_url?: string } }>('/api/v1/calendar-feeds', {});
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

async function fetchEvents(client: Client, url: string) {
  const res = await client.get(url);
  expect(res.status).toBe(200);
  // No control characters but the CRLF line ends and a fold's space.
  // eslint-disable-next-line no-control-regex
  expect(res.text.replace(/\r\n/g, '')).not.toMatch(/[\u0000-\u001F\u007F-\u009F]/);
  const calendar = new ICAL.Component(ICAL.parse(res.text));
  const events = calendar.getAllSubcomponents('vevent').map((e) => ({
    uid: String(e.getFirstPropertyValue('uid')),
    description: String(e.getFirstPropertyValue('description')),
    url: e.getFirstPropertyValue('url'),
  }));
  return { text: res.text, etag: String(res.headers.etag), events };
}

const blocked = {
  website_blocker_enabled: true,
  website_blocker: { mode: 'custom', category: ['social'], urls: ['example.com', 'news.example.org'] },
  snooze_enabled: true,
  snooze_apps: { 'Mail; Calendar, Notes': true, Slack: true, Music: false },
};

describeEachDialect('calendar feed content with PUBLIC_URL', (dialect) => {
  const t = useTestApp(dialect, { ada: [1] }, { PUBLIC_URL: 'https://focus.example.com/base/' });

  it('answers webcal_url, and each event describes its session and links to it', async () => {
    const feed = await feedOf(t.ada);
    expect(feed.webcal_url).toBe(`webcal://focus.example.com/base${feed.url}`);
    const s = await createSession(t.ada, { name: 'Deep work', type: 'standard', duration: 90, ...blocked });
    const plain = await createSession(t.ada, { name: 'Drop by', type: 'drop-in', duration: 1 });
    const { events, text } = await fetchEvents(t.ada, feed.url);
    const link = `https://focus.example.com/base/sessions/${s.id}`;
    expect(events.find((e) => e.uid === `session-${s.id}@focus`)).toEqual({
      uid: `session-${s.id}@focus`,
      description: `Standard focus session, 90 minutes.\nWebsite blocker: social, 2 sites\nSnoozed apps: Mail; Calendar, Notes, Slack\n${link}`,
      url: link,
    });
    expect(text).toContain('Snoozed apps: Mail\\; Calendar\\, Notes\\, Slack\\n');
    expect(events.find((e) => e.uid === `session-${plain.id}@focus`)?.description).toBe(
      `Drop-in focus session, 1 minute.\nWebsite blocker: off\nSnoozed apps: off\nhttps://focus.example.com/base/sessions/${plain.id}`,
    );
  });

  it('a change of the fields the description shows changes the feed, whatever was rendered before', async () => {
    const feed = await feedOf(t.ada);
    const s = await createSession(t.ada, { name: 'Changing', duration: 30 });
    const before = await fetchEvents(t.ada, feed.url);
    expect((await t.ada.put(`/api/v1/sessions/${s.id}`, { duration: 45, type: 'drop-in', ...blocked })).status).toBe(200);
    const after = await fetchEvents(t.ada, feed.url);
    expect(after.etag).not.toBe(before.etag);
    expect(after.events.find((e) => e.uid === `session-${s.id}@focus`)?.description).toMatch(/^Drop-in focus session, 45 minutes\.\nWebsite blocker: social, 2 sites\n/);
    expect((await t.ada.put(`/api/v1/sessions/${s.id}`, { website_blocker_enabled: false, snooze_enabled: false })).status).toBe(200);
    const off = await fetchEvents(t.ada, feed.url);
    expect(off.events.find((e) => e.uid === `session-${s.id}@focus`)?.description).toMatch(/\nWebsite blocker: off\nSnoozed apps: off\n/);
  });
});

describeEachDialect('calendar feed content without PUBLIC_URL', (dialect) => {
  const t = useTestApp(dialect, { ada: [1] });

  it('has no webcal_url, no URL and no link, and still describes each session', async () => {
    const feed = await feedOf(t.ada);
    expect(feed).not.toHaveProperty('webcal_url');
    const s = await createSession(t.ada, { name: 'Deep work', duration: 60 });
    const { events, text } = await fetchEvents(t.ada, feed.url);
    expect(events.find((e) => e.uid === `session-${s.id}@focus`)).toEqual({
      uid: `session-${s.id}@focus`,
      description: 'Standard focus session, 60 minutes.\nWebsite blocker: off\nSnoozed apps: off',
      url: null,
    });
    expect(text).not.toMatch(/^URL[:;]/m);
  });
});
