import { expect, it } from 'vitest';
import { type Client, describeEachDialect, useTestApp } from '../../../test/helpers/harness.js';
import { type SessionRecord, createSession } from '../sessions/sessions.test-helpers.js';
import { categoryDomains } from '../blocker/blocker.categories.js';

const MINUTE = 60_000;

/** `schedule` and `time` (UTC) of the minute `offsetMinutes` from the current one: sessions around the real now. */
function at(offsetMinutes: number): { schedule: string; time: string; timezone: 'UTC' } {
  const start = new Date(Math.floor(Date.now() / MINUTE) * MINUTE + offsetMinutes * MINUTE);
  const h = start.getUTCHours();
  const time = `${h % 12 === 0 ? 12 : h % 12}:${String(start.getUTCMinutes()).padStart(2, '0')} ${h < 12 ? 'AM' : 'PM'}`;
  return { schedule: start.toISOString().slice(0, 10), time, timezone: 'UTC' };
}

interface Now {
  active: SessionRecord[];
  next: SessionRecord | null;
  website_blocker: { category: string[]; domains: string[]; urls: string[] } | null;
  snooze_apps: Record<string, boolean>;
}

async function now(client: Client): Promise<Now> {
  const res = await client.get('/api/v1/me/now');
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

const names = (list: SessionRecord[]) => list.map((s) => s.name);

describeEachDialect('GET /me/now', (dialect) => {
  const t = useTestApp(dialect, { alice: [1], bob: [1], carol: [2], dan: [1] });

  it('is empty for a user with nothing running or planned', async () => {
    expect(await now(t.dan)).toEqual({ active: [], next: null, website_blocker: null, snooze_apps: {} });
    expect((await t.anonymous.get('/api/v1/me/now')).status).toBe(401);
  });

  it('lists the occurrences running now, before and after their minutes, and unions what they block', async () => {
    const running = await createSession(t.alice, {
      name: 'running custom', ...at(-5), duration: 15,
      website_blocker_enabled: true, website_blocker: { mode: 'custom', category: ['social', 'news'], urls: ['example.com', 'https://news.example.org/'] },
      snooze_enabled: true, snooze_apps: { Slack: true, Mail: false },
    });
    const startsNow = await createSession(t.alice, {
      name: 'starts this minute (preset)', ...at(0), duration: 30,
      website_blocker_enabled: true, website_blocker: { mode: 'preset', category: ['news', 'video'], urls: ['ignored.example'] },
      snooze_enabled: true, snooze_apps: { Mail: true, Teams: false },
    });
    await createSession(t.alice, { name: 'blocker off', ...at(-1), duration: 10, website_blocker_enabled: false, website_blocker: { mode: 'custom', urls: ['off.example'] }, snooze_apps: { Off: true } });
    await createSession(t.alice, { name: 'ended', ...at(-30), duration: 10, website_blocker_enabled: true, website_blocker: { mode: 'custom', urls: ['ended.example'] } });
    const later = await createSession(t.alice, { name: 'later', ...at(20), duration: 30 });
    await createSession(t.alice, { name: 'much later', ...at(90), duration: 30 });
    const series = await createSession(t.alice, { name: 'daily series', ...at(-2), schedule: '2026-01-01', duration: 5, is_recurring: 1, occurrence: 'daily' });
    // Bob's public session runs now too, but Alice has not joined it yet; Carol's is in another org.
    const bobs = await createSession(t.bob, { name: 'bob public', is_public: true, ...at(-3), duration: 60, snooze_enabled: true, snooze_apps: { Discord: true } });
    await createSession(t.carol, { org_id: 2, name: 'carol', is_public: true, ...at(-3), duration: 60 });

    const first = await now(t.alice);
    expect(new Set(names(first.active))).toEqual(new Set(['running custom', 'blocker off', 'daily series', 'starts this minute (preset)']));
    const runningItem = first.active.find((s) => s.id === running.id);
    expect(runningItem).toMatchObject({ occurrence_date: running.schedule, starts_at: running.starts_at, ends_at: running.ends_at, participants_count: 1 });
    const seriesItem = first.active.find((s) => s.id === series.id);
    expect(seriesItem?.occurrence_date).toBe(at(-2).schedule);
    expect(Date.parse(seriesItem?.starts_at ?? '')).toBeLessThanOrEqual(Date.now());
    expect(first.active.find((s) => s.id === startsNow.id)?.starts_at).toBe(startsNow.starts_at);
    // In listing order, each item as a dated listing shows it.
    const starts = first.active.map((s) => s.starts_at);
    expect(starts).toEqual([...starts].sort());
    const listed = await t.alice.get(`/api/v1/sessions?date=${running.schedule}&source=user&limit=500`);
    expect(listed.body.data.find((s: SessionRecord) => s.id === running.id)).toEqual(runningItem);
    expect(first.next).toMatchObject({ id: later.id, name: 'later', starts_at: later.starts_at, occurrence_date: later.schedule });
    // The categories expanded to their preset domains, each once (GET /blocker/categories).
    const domains = categoryDomains(['social', 'news', 'video']);
    expect(domains).toEqual(expect.arrayContaining(['facebook.com', 'news.ycombinator.com', 'youtube.com']));
    expect(first.website_blocker).toEqual({ category: ['social', 'news', 'video'], domains, urls: ['example.com', 'https://news.example.org/'] });
    expect(first.snooze_apps).toEqual({ Slack: true, Mail: true, Teams: false });

    // Joining Bob's session brings it (and its snoozes) in; others' sessions never appear.
    expect((await t.alice.post(`/api/v1/sessions/${bobs.id}/join`)).status).toBe(200);
    const second = await now(t.alice);
    expect(names(second.active)).toContain('bob public');
    expect(names(second.active)).not.toContain('carol');
    expect(second.snooze_apps).toMatchObject({ Discord: true });
    expect(names((await now(t.bob)).active)).toEqual(['bob public']);
    expect((await now(t.bob)).website_blocker).toBeNull();
  });

  it('finds the next occurrence far beyond the index horizon, and sessions the index does not hold', async () => {
    const erin = await t.user('erin', [1]);
    const far = await createSession(erin, { name: 'next year', ...at(0), schedule: `${new Date().getUTCFullYear() + 1}-06-15`, duration: 30 });
    expect((await now(erin)).next).toMatchObject({ id: far.id, occurrence_date: far.schedule });
    // A series stored before the index existed (indexed_through null, no index rows) is expanded per request.
    const legacy = await createSession(erin, { name: 'legacy series', ...at(-4), schedule: '2025-01-01', duration: 10, is_recurring: 1, occurrence: 'daily' });
    await t.storage.db.deleteFrom('session_occurrences').where('session_id', '=', legacy.id).execute();
    await t.storage.db.updateTable('sessions').set({ indexed_through: null }).where('id', '=', legacy.id).execute();
    const state = await now(erin);
    expect(names(state.active)).toEqual(['legacy series']);
    expect(state.active[0]?.occurrence_date).toBe(at(-4).schedule);
    expect(state.next).toMatchObject({ id: legacy.id });
    expect(Date.parse(state.next?.starts_at ?? '')).toBe(Date.parse(state.active[0]?.starts_at ?? '') + 86_400_000);
  });
});
