import fastJsonStringify from 'fast-json-stringify';
import { beforeAll, expect, it } from 'vitest';
import { type Client, describeEachDialect, useTestApp } from '../../../test/helpers/harness.js';
import { SessionList } from './sessions.route-schema.js';
import { type SessionRecord, createSession } from './sessions.test-helpers.js';

const DAY = 86_400_000;
const addDays = (date: string, n: number) => new Date(Date.parse(`${date}T00:00:00Z`) + n * DAY).toISOString().slice(0, 10);
/** The route's serializer (toolkit/serialization.ts compiles the same schema the same way). */
const serialize = fastJsonStringify(SessionList as object) as (data: unknown) => string;

/**
 * A listing page is assembled from record texts kept per row (sessions.rendering.ts) instead of
 * serialized whole: every page must be, byte for byte, what the schema's serializer writes for it.
 */
describeEachDialect('listing pages assembled from kept record texts', (dialect) => {
  const t = useTestApp(dialect, { alice: [1], bob: [1] });
  const start = addDays(new Date().toISOString().slice(0, 10), 3);
  const range = `day_start=${start}&day_ends=${addDays(start, 20)}`;
  let series: SessionRecord;
  let oneOff: SessionRecord;

  beforeAll(async () => {
    oneOff = await createSession(t.alice, {
      name: 'Say "hi" \\ 😀 \u2028 end',
      is_public: true,
      schedule: start,
      collaborator: ['bob'],
      website_blocker_enabled: true,
      website_blocker: { mode: 'custom', category: ['social'], urls: ['example.com', 'https://news.example.org/path?q=1&x="y"'] },
      snooze_enabled: true,
      snooze_apps: { slack: true, 'mail "x"': false },
      reminders: [10, 5],
    });
    series = await createSession(t.alice, { name: 'daily', is_public: true, schedule: start, time: '9:00 AM', is_recurring: 1, occurrence: 'daily', recurring_ends: addDays(start, 14) });
    // An overridden day, a removed one (EXDATE), a joined one, and a split (split_from).
    expect((await t.alice.put(`/api/v1/sessions/${series.id}?date=${addDays(start, 1)}&scope=occurrence`, { name: 'moved', time: '10:00 AM' })).status).toBe(200);
    expect((await t.alice.delete(`/api/v1/sessions/${series.id}?scope=occurrence&date=${addDays(start, 2)}`)).status).toBe(204);
    expect((await t.bob.post(`/api/v1/sessions/${series.id}/join?date=${addDays(start, 3)}`)).status).toBe(200);
    expect((await t.alice.put(`/api/v1/sessions/${series.id}?date=${addDays(start, 8)}&scope=following`, { name: 'daily v2' })).status).toBe(201);
  });

  /** A page's text, checked against the serializer; its parsed body. */
  async function page(client: Client, query: string): Promise<SessionRecord[]> {
    const res = await client.get(`/api/v1/sessions?${query}`);
    expect(res.status, res.text).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.text).toBe(serialize(JSON.parse(res.text)));
    return (res.body as { data: SessionRecord[] }).data;
  }

  it('writes every page as the schema serializer would', async () => {
    for (const client of [t.alice, t.bob]) {
      for (const query of ['', range, `date=${addDays(start, 1)}`, 'keyword=say', `${range}&limit=3`, `${range}&type=standard&completed=0`]) {
        expect((await page(client, query)).length, query).toBeGreaterThan(0);
      }
    }
    const days = await page(t.alice, range);
    const byDate = new Map(days.filter((s) => s.id === series.id).map((s) => [s.occurrence_date, s]));
    expect(byDate.get(addDays(start, 1))?.name).toBe('moved');
    expect(byDate.has(addDays(start, 2))).toBe(false);
    expect(byDate.get(addDays(start, 3))?.participants_count).toBe(2);
    // A listed occurrence's rrule leaves out the removed-occurrence lines.
    expect(byDate.get(addDays(start, 0))?.rrule).not.toContain('EXDATE');
    expect(days.find((s) => s.name === 'daily v2')?.split_from).toBe(series.id);
    expect(days.find((s) => s.id === oneOff.id)?.name).toBe('Say "hi" \\ 😀 \u2028 end');
  });

  it('shows each listed occurrence as GET /sessions/{id}?date= does (participation and removed-occurrence lines aside)', async () => {
    for (const listed of await page(t.bob, range)) {
      const one = await t.bob.get(`/api/v1/sessions/${listed.id}?date=${listed.occurrence_date}`);
      expect(one.status, one.text).toBe(200);
      const { participation: _p, rrule, ...rest } = one.body.data as SessionRecord & { participation: unknown; rrule: string | null };
      const { rrule: listedRule, ...listedRest } = listed as SessionRecord & { rrule: string | null };
      expect(listedRest).toEqual(rest);
      expect(rrule === null ? listedRule === null : listedRule !== null && rrule.startsWith(listedRule)).toBe(true);
    }
  });

  it('shows a changed row and a new count on the next page, not the kept text', async () => {
    const before = (await page(t.alice, range)).find((s) => s.id === oneOff.id) as SessionRecord;
    expect(before.participants_count).toBe(1);
    expect((await t.alice.put(`/api/v1/sessions/${oneOff.id}`, { name: 'renamed' })).status).toBe(200);
    expect((await t.bob.post(`/api/v1/sessions/${oneOff.id}/join`)).status).toBe(200);
    const after = (await page(t.alice, range)).find((s) => s.id === oneOff.id) as SessionRecord;
    expect(after).toMatchObject({ name: 'renamed', participants_count: 2 });
  });
});
