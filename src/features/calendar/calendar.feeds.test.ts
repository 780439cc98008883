import ICAL from 'ical.js';
import { expect, it } from 'vitest';
import { type Client, describeEachDialect, useTestApp } from '../../../test/helpers/harness.js';
import { createSession } from '../sessions/sessions.test-helpers.js';
import { sessionRow } from '../../../test/helpers/session-row.js';
import { MAX_FEEDS_PER_USER, MAX_FEED_EVENTS } from './calendar.schema.js';
import { parseFeed } from './calendar.test-helpers.js';

async function newFeed(client: Client, name?: string): Promise<{ id: number; url: string; name: string }> {
  const res = await client.post('/api/v1/calendar-feeds', name === undefined ? {} : { name });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

/** The API's occurrences of a session in [from, to]: their days and instants (a feed has no `phase`, which moves with the clock). */
async function apiOccurrences(client: Client, id: number, from: string, to: string) {
  const res = await client.get(`/api/v1/sessions/${id}/occurrences?from=${from}&to=${to}`);
  expect(res.status, res.text).toBe(200);
  const data = res.body.data as { occurrence_date: string; starts_at: string; ends_at: string }[];
  return data.map(({ occurrence_date, starts_at, ends_at }) => ({ occurrence_date, starts_at, ends_at }));
}

describeEachDialect('calendar feeds', (dialect) => {
  const t = useTestApp(dialect, { alice: [1], bob: [1], carol: [2], dave: [1] });

  it('serves every session Alice created, collaborates on or joined, each expanding to exactly the API’s occurrences across DST', async () => {
    const from = '2026-01-01';
    const to = '2026-12-31';
    const berlinDaily = await createSession(t.alice, {
      name: 'Berlin daily', timezone: 'Europe/Berlin', schedule: '2026-03-20', time: '9:00 AM', is_recurring: 1, occurrence: 'daily', recurring_ends: '2026-04-05',
    });
    expect((await t.alice.delete(`/api/v1/sessions/${berlinDaily.id}?scope=occurrence&date=2026-03-25`)).status).toBe(204);
    expect((await t.alice.delete(`/api/v1/sessions/${berlinDaily.id}?scope=occurrence&date=2026-03-30`)).status).toBe(204);
    const nyWeekly = await createSession(t.alice, {
      name: 'NY weekly', timezone: 'America/New_York', schedule: '2026-02-23', time: '6:30 PM', is_recurring: 1, occurrence: 'weekly', recurring_days: [1, 3, 5],
      recurring_ends: '2026-11-20', duration: 90,
    });
    expect((await t.alice.delete(`/api/v1/sessions/${nyWeekly.id}?scope=occurrence&date=2026-11-02`)).status).toBe(204);
    const monthlyLast = await createSession(t.alice, {
      name: 'Month end', timezone: 'Europe/Berlin', schedule: '2026-01-31', time: '11:00 PM', is_recurring: 1, occurrence: 'monthly',
      recurring_month_option: 'exact', fallback_option: 1,
    });
    const monthlyWeekday = await createSession(t.alice, {
      name: 'Second Tuesday', timezone: 'America/New_York', schedule: '2026-01-13', time: '7:00 AM', is_recurring: 1, occurrence: 'monthly',
      recurring_month_option: 'week_day', recurring_month_week_pos: 2, recurring_month_week_day: 2,
    });
    const sydney = await createSession(t.alice, {
      name: 'Sydney daily', timezone: 'Australia/Sydney', schedule: '2026-03-30', time: '8:15 AM', is_recurring: 1, occurrence: 'daily', recurring_ends: '2026-04-10',
    });
    const oneOff = await createSession(t.alice, { name: 'One-off, Berlin; "summer"', timezone: 'Europe/Berlin', schedule: '2026-07-01', time: '10:00 AM' });
    const utc = await createSession(t.alice, { name: 'UTC one-off', timezone: 'UTC', schedule: '2026-11-01', time: '1:30 AM' });
    // One-off sessions at wall times that do not name one instant (DST gap, overlap) are written in UTC.
    const inGap = await createSession(t.alice, { name: 'in the gap', timezone: 'Europe/Berlin', schedule: '2026-03-29', time: '2:30 AM' });
    const inOverlap = await createSession(t.alice, { name: 'in the overlap', timezone: 'America/New_York', schedule: '2026-11-01', time: '1:30 AM' });
    // Bob's: public and joined by Alice (in), private with Alice collaborating (in), public untouched (out), private (out).
    const joined = await createSession(t.bob, { name: 'Bob public joined', is_public: true, timezone: 'Europe/Berlin', schedule: '2026-10-20', time: '9:00 AM', is_recurring: 1, occurrence: 'weekly', recurring_ends: '2026-11-30' });
    expect((await t.alice.post(`/api/v1/sessions/${joined.id}/join?date=2026-10-27`)).status).toBe(200);
    const collaborating = await createSession(t.bob, { name: 'Bob private with Alice', collaborator: ['alice'], schedule: '2026-05-05', time: '3:00 PM', timezone: 'Asia/Tokyo' });
    const untouched = await createSession(t.bob, { name: 'Bob public', is_public: true, schedule: '2026-05-06' });
    const hidden = await createSession(t.bob, { name: 'Bob private', schedule: '2026-05-07' });
    const otherOrg = await createSession(t.carol, { org_id: 2, name: 'Carol', is_public: true, schedule: '2026-05-08' });

    const feed = await newFeed(t.alice, 'Alice everywhere');
    expect(feed.url).toMatch(/^\/ical\/[A-Za-z0-9_-]{43}\.ics$/);
    const res = await t.anonymous.get(feed.url);
    expect(res.status, res.text).toBe(200);
    expect(res.headers['content-type']).toBe('text/calendar; charset=utf-8');
    expect(res.text).toMatch(/^BEGIN:VCALENDAR\r\n/);
    const { events, timezones } = parseFeed(res.text);
    expect(timezones.sort()).toEqual(['America/New_York', 'Asia/Tokyo', 'Australia/Sydney', 'Europe/Berlin']);
    const included = [berlinDaily, nyWeekly, monthlyLast, monthlyWeekday, sydney, oneOff, utc, inGap, inOverlap, joined, collaborating];
    expect([...events.keys()].sort()).toEqual(included.map((s) => `session-${s.id}@focus`).sort());
    for (const absent of [untouched, hidden, otherOrg]) expect(events.has(`session-${absent.id}@focus`)).toBe(false);
    for (const session of included) {
      const event = events.get(`session-${session.id}@focus`);
      expect(event?.summary).toBe(session.name);
      expect(event?.status).toBe('CONFIRMED');
      const expected = await apiOccurrences(t.alice, session.id, from, to);
      expect(expected.length, session.name).toBeGreaterThan(0);
      expect(event?.expand(from, to), session.name).toEqual(expected);
    }
    // Removed occurrences are EXDATEs; DTSTART carries the zone.
    expect(res.text).toContain('EXDATE;TZID=Europe/Berlin:20260325T090000,20260330T090000');
    expect(res.text).toContain('DTSTART;TZID=America/New_York:20260223T183000');
    expect(res.text).toContain('DTSTART:20261101T013000Z');
    expect(res.text).toContain('DTSTART:20260329T013000Z');
    expect(res.text).toContain('DTSTART:20261101T053000Z');
    // Taken off the collaborators, Alice no longer sees Bob's private session: it leaves her feed.
    expect((await t.bob.put(`/api/v1/sessions/${collaborating.id}`, { collaborator: [] })).status).toBe(200);
    expect(parseFeed((await t.anonymous.get(feed.url)).text).events.has(`session-${collaborating.id}@focus`)).toBe(false);
    // The next year too, across its DST changes (the VTIMEZONE's yearly rules).
    for (const session of [monthlyLast, monthlyWeekday]) {
      expect(events.get(`session-${session.id}@focus`)?.expand('2027-01-01', '2027-12-31')).toEqual(await apiOccurrences(t.alice, session.id, '2027-01-01', '2027-12-31'));
    }
  });

  it('answers 304 to a current ETag, and a new ETag and a higher SEQUENCE after a change', async () => {
    const session = await createSession(t.dave, { name: 'Versioned', timezone: 'Europe/Berlin', schedule: '2026-06-01', is_recurring: 1, occurrence: 'daily', recurring_ends: '2026-06-30' });
    const feed = await newFeed(t.dave);
    const first = await t.anonymous.get(feed.url);
    const etag = String(first.headers.etag);
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const uid = `session-${session.id}@focus`;
    const before = parseFeed(first.text).events.get(uid);
    expect(before?.sequence).toBe(0);
    const again = await t.anonymous.request('GET', feed.url, undefined, { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');

    expect((await t.dave.put(`/api/v1/sessions/${session.id}`, { name: 'Versioned, renamed' })).status).toBe(200);
    const changed = await t.anonymous.request('GET', feed.url, undefined, { 'if-none-match': etag });
    expect(changed.status).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
    const after = parseFeed(changed.text).events.get(uid);
    expect(after?.summary).toBe('Versioned, renamed');
    expect(after?.sequence).toBe(1);
    expect((await t.dave.delete(`/api/v1/sessions/${session.id}?scope=occurrence&date=2026-06-10`)).status).toBe(204);
    const third = parseFeed((await t.anonymous.get(feed.url)).text).events.get(uid);
    expect(third?.sequence).toBe(2);
    expect(third?.expand('2026-06-01', '2026-06-30')).toEqual(await apiOccurrences(t.dave, session.id, '2026-06-01', '2026-06-30'));
    // Sending back what is stored changes nothing: same bytes, same tag.
    const tag = (await t.anonymous.get(feed.url)).headers.etag;
    expect((await t.dave.put(`/api/v1/sessions/${session.id}`, { name: 'Versioned, renamed' })).status).toBe(200);
    expect((await t.anonymous.get(feed.url)).headers.etag).toBe(tag);
  });

  it('writes a name with iCalendar separators escaped, ends every line with CRLF, and refuses a name of more than one line', async () => {
    const created = await t.dave.post('/api/v1/calendar-feeds', { name: 'Dave; work, home\\ Ärger' });
    expect(created.status, created.text).toBe(201);
    expect(created.headers.location).toBe(`/api/v1/calendar-feeds/${created.body.data.id}`);
    await createSession(t.dave, { name: 'Review; then, lunch', schedule: '2027-02-01', time: '9:00 AM' });
    const res = await t.anonymous.get(created.body.data.url);
    expect(res.status).toBe(200);
    expect(res.text).toContain('\r\nX-WR-CALNAME:Dave\\; work\\, home\\\\ Ärger\r\n');
    expect(res.text.endsWith('END:VCALENDAR\r\n')).toBe(true);
    const { calendar, events } = parseFeed(res.text);
    // ical.js keeps properties it has no type for as written; read as TEXT (RFC 7986), both names are the feed's.
    for (const property of ['name', 'x-wr-calname']) {
      expect(ICAL.design.icalendar.value.text?.fromICAL?.(String(calendar.getFirstPropertyValue(property)))).toBe('Dave; work, home\\ Ärger');
    }
    expect([...events.values()].map((e) => e.summary)).toContain('Review; then, lunch');
    for (const name of ['two\nlines', 'inj\nBEGIN:VEVENT\nUID:evil@x\nEND:VEVENT', 'tab\there', 'bell\u0007', 'c1\u0085']) {
      const refused = await t.dave.post('/api/v1/calendar-feeds', { name });
      expect(refused.status, name).toBe(422);
      expect(refused.body.errors.map((e: { path: string }) => e.path)).toEqual(['/name']);
    }
  });

  it('shows a secret once, lists feeds without it, revokes to 404, and keeps users apart', async () => {
    const feed = await newFeed(t.bob, '  Bob phone  ');
    expect(feed.name).toBe('Bob phone');
    const secret = feed.url.slice('/ical/'.length, -'.ics'.length);
    const list = await t.bob.get('/api/v1/calendar-feeds');
    expect(list.status).toBe(200);
    expect(list.body.data).toContainEqual({ id: feed.id, name: 'Bob phone', created_at: expect.any(String) });
    expect(list.text).not.toContain(secret);
    expect(list.body.next_cursor).toBeNull();
    expect((await t.alice.get('/api/v1/calendar-feeds')).body.data.map((f: { id: number }) => f.id)).not.toContain(feed.id);

    // Alice cannot revoke Bob's feed: 404, and it keeps working.
    expect((await t.alice.delete(`/api/v1/calendar-feeds/${feed.id}`)).status).toBe(404);
    expect((await t.anonymous.get(feed.url)).status).toBe(200);
    expect((await t.anonymous.get(`/api/v1/calendar-feeds`)).status).toBe(401);

    expect((await t.bob.delete(`/api/v1/calendar-feeds/${feed.id}`)).status).toBe(204);
    expect((await t.bob.delete(`/api/v1/calendar-feeds/${feed.id}`)).status).toBe(404);
    const revoked = await t.anonymous.get(feed.url);
    const unknown = await t.anonymous.get(`/ical/${'A'.repeat(43)}.ics`);
    const malformed = await t.anonymous.get('/ical/short.ics');
    const noSuffix = await t.anonymous.get(`/ical/${secret}`);
    for (const res of [revoked, unknown, malformed, noSuffix]) {
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.text).toBe(revoked.text);
    }
    expect(revoked.text).not.toContain(secret);
  });

  it('writes no control character in any text value, whatever a stored name holds', async () => {
    const hal = await t.user('hal', [1]);
    const { id: userId } = await t.storage.db.selectFrom('users').select('id').where('handle', '=', 'hal').executeTakeFirstOrThrow();
    // Stored as older versions let them in (the API refuses such names now): VT, ESC, DEL, a C1 control, BEL.
    const stored = 'Deep\u000bwork \u001b[31mred\u007f; done\u0085\u0007!';
    await t.storage.db.insertInto('sessions').values(sessionRow(stored, userId, { is_public: 0 })).execute();
    const res = await t.anonymous.get((await newFeed(hal)).url);
    expect(res.status).toBe(200);
    // Only CR LF line ends and the space folding adds: no other C0, DEL or C1 character anywhere.
    // eslint-disable-next-line no-control-regex
    expect(res.text.replace(/\r\n/g, '')).not.toMatch(/[\u0000-\u001F\u007F-\u009F]/);
    const summaries = [...parseFeed(res.text).events.values()].map((e) => e.summary);
    expect(summaries).toEqual(['Deepwork [31mred; done!']);
  });

  it(`holds at most ${MAX_FEED_EVENTS} sessions, the most recently changed, and says when it left some out`, async () => {
    const fay = await t.user('fay', [1]);
    const { id: userId } = await t.storage.db.selectFrom('users').select('id').where('handle', '=', 'fay').executeTakeFirstOrThrow();
    const rows = Array.from({ length: MAX_FEED_EVENTS + 1 }, (_, i) =>
      sessionRow(`bulk ${i}`, userId, { is_public: 0, updated_at: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString() }),
    );
    for (let i = 0; i < rows.length; i += 100) await t.storage.db.insertInto('sessions').values(rows.slice(i, i + 100)).execute();
    const feed = await newFeed(fay);
    const full = await t.anonymous.get(feed.url);
    expect(full.status).toBe(200);
    expect(full.headers['x-focus-feed-truncated']).toBe('true');
    const summaries = [...parseFeed(full.text).events.values()].map((e) => e.summary);
    expect(summaries).toHaveLength(MAX_FEED_EVENTS);
    expect(summaries).not.toContain('bulk 0');
    expect(summaries).toContain(`bulk ${MAX_FEED_EVENTS}`);
    // Without truncation, no header.
    expect((await t.anonymous.get((await newFeed(t.dave)).url)).headers['x-focus-feed-truncated']).toBeUndefined();
  });

  it(`refuses a ${MAX_FEEDS_PER_USER + 1}st feed with 409, and a bad name with 422`, async () => {
    const eve = await t.user('eve', [1]);
    for (let i = 0; i < MAX_FEEDS_PER_USER; i++) await newFeed(eve);
    const over = await eve.post('/api/v1/calendar-feeds', {});
    expect(over.status).toBe(409);
    expect((await eve.get('/api/v1/calendar-feeds')).body.data).toHaveLength(MAX_FEEDS_PER_USER);
    expect((await t.alice.post('/api/v1/calendar-feeds', { name: '   ' })).status).toBe(422);
    expect((await t.alice.post('/api/v1/calendar-feeds', { name: 'x', secret: 'mine' })).status).toBe(422);
    expect((await t.alice.delete('/api/v1/calendar-feeds/0')).status).toBe(404);
    // No body at all is an empty one.
    const bare = await t.alice.request('POST', '/api/v1/calendar-feeds');
    // Concurrent creates take turns on the user's row: the cap holds exactly.
    const gus = await t.user('gus', [1]);
    const raced = await Promise.all(Array.from({ length: MAX_FEEDS_PER_USER + 5 }, () => gus.post('/api/v1/calendar-feeds', {})));
    expect(raced.filter((r) => r.status === 201)).toHaveLength(MAX_FEEDS_PER_USER);
    expect(raced.filter((r) => r.status === 409)).toHaveLength(5);
    expect(bare.status, bare.text).toBe(201);
    expect(bare.body.data.name).toBe('Focus sessions');
  });
});

describeEachDialect('calendar feeds under the rate limit', (dialect) => {
  const t = useTestApp(dialect, { alice: [1], bob: [1] }, { RATE_LIMIT: '5' });

  it('counts each known feed on a budget of its own: hammering one feed is 429 for that feed only', async () => {
    const hammered = await newFeed(t.alice);
    const other = await newFeed(t.alice);
    for (let i = 1; i <= 5; i++) {
      const res = await t.anonymous.get(hammered.url);
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit-policy']).toBe('"feed";q=5;w=60');
      expect(res.headers.ratelimit).toMatch(new RegExp(`^"feed";r=${5 - i};t=\\d+$`));
    }
    const limited = await t.anonymous.get(hammered.url);
    expect(limited.status).toBe(429);
    expect(limited.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(limited.body).toMatchObject({ status: 429 });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // Nobody else paid for it: another feed, anonymous requests from the same address, another user's token.
    expect((await t.anonymous.get(other.url)).status).toBe(200);
    expect((await t.anonymous.get('/api/v1/openapi.json')).status).toBe(200);
    expect((await t.bob.get('/api/v1/me')).status).toBe(200);
  });

  it('charges unknown secrets to the client address, like every request without a token', async () => {
    const feed = await newFeed(t.alice);
    const statuses: number[] = [];
    for (let i = 0; i < 6 && statuses.at(-1) !== 429; i++) statuses.push((await t.anonymous.get(`/ical/${String.fromCharCode(65 + i).repeat(43)}.ics`)).status);
    // (The test before spent one request of this address.)
    expect(statuses.slice(0, -1).every((s) => s === 404)).toBe(true);
    expect(statuses.at(-1)).toBe(429);
    // Once the address has spent its budget on guesses, a real secret from it waits too.
    const after = await t.anonymous.get(feed.url);
    expect(after.status).toBe(429);
    expect(after.headers['content-type']).toMatch(/^application\/problem\+json/);
  });
});
