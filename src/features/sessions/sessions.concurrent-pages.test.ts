import { expect, it } from 'vitest';
import { type Client, type Response, describeEachDialect, useTestApp } from '../../../test/helpers/harness.js';
import { type SessionRecord, createSession } from './sessions.test-helpers.js';

const day = (n: number) => `2027-01-${String(1 + (n % 28)).padStart(2, '0')}`;
const time = (n: number) => `${1 + (n % 11)}:${String((n * 7) % 60).padStart(2, '0')} AM`;

/** Every page of a listing, whatever each page holds (a page may be short while rows change); `between` runs after each page. */
async function walk(client: Client, query: string, between: () => Promise<void>): Promise<SessionRecord[]> {
  const out: SessionRecord[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 500; page++) {
    const res: Response<{ data: SessionRecord[]; next_cursor: string | null }> = await client.get(`/api/v1/sessions?${query}&limit=7${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`);
    expect(res.status, res.text).toBe(200);
    out.push(...res.body.data);
    cursor = res.body.next_cursor;
    await between();
    if (cursor === null) return out;
  }
  throw new Error('paging did not end');
}

/*
 * Pages read while another member edits between them: every page still answers the simple definition
 * for what did not change (each of the reader's own and of the steadily public sessions
 * exactly once, in order), never shows what was private throughout, and shows what flipped
 * at most once. Through the kept rows (row_version) and the personal stream.
 */
describeEachDialect('pages read between edits', (dialect) => {
  const t = useTestApp(dialect, { alice: [1], bob: [1] });

  it('list what did not change exactly once, in order, and never what stayed private', async () => {
    const mine: SessionRecord[] = [];
    const steady: SessionRecord[] = [];
    const hidden: SessionRecord[] = [];
    const flip: SessionRecord[] = [];
    for (let n = 0; n < 24; n++) {
      mine.push(await createSession(t.alice, { name: `mine ${n}`, schedule: day(n), time: time(n) }));
      steady.push(await createSession(t.bob, { name: `steady ${n}`, is_public: true, schedule: day(n + 3), time: time(n + 3) }));
      hidden.push(await createSession(t.bob, { name: `hidden ${n}`, schedule: day(n + 5), time: time(n + 5) }));
      flip.push(await createSession(t.bob, { name: `flip ${n}`, is_public: true, schedule: day(n + 7), time: time(n + 7) }));
    }
    let round = 0;
    // Between every two pages another member flips one session's visibility and renames two: the
    // rows a page kept, and the cursor's neighbourhood, change under the walk.
    const edit = async () => {
      const n = round % 24;
      const writes = [
        t.bob.put(`/api/v1/sessions/${flip[n]?.id}`, { is_public: round % 48 >= 24 }),
        t.bob.put(`/api/v1/sessions/${steady[n]?.id}`, { name: `steady ${n} v${round}` }),
        t.bob.put(`/api/v1/sessions/${hidden[n]?.id}`, { name: `hidden ${n} v${round}` }),
      ];
      for (const res of await Promise.all(writes)) expect(res.status, res.text).toBe(200);
      round++;
    };
    for (const query of ['source=organization', 'day_start=2027-01-01&day_ends=2027-01-31']) {
      for (let pass = 0; pass < 3; pass++) {
        const seen = await walk(t.alice, query, edit);
        const keys = seen.map((s) => `${s.starts_at}|${String(s.id).padStart(9, '0')}|${s.occurrence_date ?? ''}`);
        expect(keys, query).toEqual([...keys].sort());
        expect(new Set(keys).size, query).toBe(keys.length);
        const count = (id: number) => seen.filter((s) => s.id === id).length;
        for (const s of [...mine, ...steady]) expect(count(s.id), `${query}: ${s.name}`).toBe(1);
        for (const s of hidden) expect(count(s.id), `${query}: ${s.name}`).toBe(0);
        for (const s of flip) expect(count(s.id)).toBeLessThanOrEqual(1);
        for (const s of seen.filter((r) => r.name.startsWith('steady'))) expect(s.name).toMatch(/^steady \d+( v\d+)?$/);
      }
    }
    expect(round).toBeGreaterThan(40);
  }, 60_000);
});
