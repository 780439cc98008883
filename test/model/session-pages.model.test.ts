import fc from 'fast-check';
import { afterAll, expect, it } from 'vitest';
import { type Client, describeEachDialect, useTestApp } from '../helpers/harness.js';
import { report } from '../helpers/report.js';
import { propertySeed } from '../helpers/seed.js';

/*
 * Every page of GET /sessions equals what the simple definition gives (issue 36): the sessions
 * of the reader's orgs that are public, the reader's own, or ones the reader collaborates on or
 * joined; the filters as the interface document states them; ordered by (starts_at, id) or, for
 * a date or range, by occurrence (starts_at, id, date); each page the first `limit` items after
 * the cursor's key, in the world as it is when the page is asked for (edits land between pages),
 * and a page asked for while an edit runs shows nothing outside "before or after" and misses
 * nothing that qualifies in both. The model takes only instants from the service (each
 * session's own record and occurrence list, read by its creator). Replay with FC_SEED.
 */
const SEED = propertySeed();
const RUNS = Number(process.env.FC_RUNS ?? 6);
type Handle = 'alice' | 'bob' | 'carol' | 'dave';
const USERS: Record<Handle, number[]> = { alice: [1], bob: [1], carol: [2], dave: [1, 2] };
const HANDLES = Object.keys(USERS) as Handle[];
const WORDS = ['alpha', 'beta', 'gamma', 'delta'];
const ZONES = ['UTC', 'America/Los_Angeles', 'Pacific/Kiritimati', 'Asia/Tokyo'];
const DAY = 86_400_000;
/** The model's window: from a few days ago to past the occurrence index's horizon (92 days), so both the index and per-request expansion serve pages. */
const dayAt = (offset: number) => new Date(Date.now() + offset * DAY).toISOString().slice(0, 10);
const WINDOW = { from: dayAt(-5), to: dayAt(120) };

interface Modelled {
  id: number;
  creator: Handle;
  org: number;
  name: string;
  type: string;
  isPublic: boolean;
  completed: boolean;
  collaborators: Handle[];
  joined: Set<Handle>;
  startsAt: string;
  occurrences: { date: string; startsAt: string }[];
}
type Item = { key: [string, number, string]; ident: string };

const spec = fc.record({
  creator: fc.constantFrom(...HANDLES),
  orgPick: fc.nat(1),
  words: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 2 }),
  type: fc.constantFrom('standard', 'drop-in'),
  isPublic: fc.boolean(),
  // Mostly within a month (pages of several items), some past the occurrence index's horizon.
  offset: fc.oneof({ weight: 4, arbitrary: fc.integer({ min: -4, max: 20 }) }, { weight: 1, arbitrary: fc.integer({ min: 90, max: 100 }) }),
  minutes: fc.integer({ min: 0, max: 47 }).map((h) => h * 30),
  zone: fc.constantFrom(...ZONES),
  series: fc.option(fc.integer({ min: 1, max: 4 }), { freq: 3 }),
  collaborate: fc.boolean(),
});
/** null three times in four: a filter on every walk would leave pages of one item and few cursors. */
const rarely = <T>(arb: fc.Arbitrary<T>) => fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: arb });
const query = fc.record({
  reader: fc.constantFrom(...HANDLES),
  dated: fc.constantFrom('none', 'date', 'range'),
  offset: fc.oneof({ weight: 4, arbitrary: fc.integer({ min: -5, max: 15 }) }, { weight: 1, arbitrary: fc.integer({ min: 85, max: 100 }) }),
  span: fc.integer({ min: 0, max: 20 }),
  type: rarely(fc.constantFrom('standard', 'drop-in')),
  completed: rarely(fc.constantFrom(0, 1)),
  keyword: rarely(fc.constantFrom('alp', 'BETA', 'a d', 'ta')),
  channel: rarely(fc.constantFrom('public', 'private')),
  source: rarely(fc.constantFrom('user', 'organization')),
  /** org_id: one of the reader's orgs (the nth). */
  org: rarely(fc.nat(1)),
  limit: fc.integer({ min: 1, max: 2 }),
});
type Query = typeof query extends fc.Arbitrary<infer Q> ? Q : never;
const edit = fc.record({ pick: fc.nat(), kind: fc.constantFrom('rename', 'visibility', 'complete', 'delete', 'move') });
type Edit = typeof edit extends fc.Arbitrary<infer E> ? E : never;

const clock = (minutes: number) => `${((Math.floor(minutes / 60) + 11) % 12) + 1}:${String(minutes % 60).padStart(2, '0')} ${minutes < 720 ? 'AM' : 'PM'}`;
const orgFilter = (q: Query) => (q.org === null ? null : USERS[q.reader][q.org % USERS[q.reader].length]);
const compareKeys = (a: Item['key'], b: Item['key']) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] !== b[1] ? a[1] - b[1] : a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0);

/** The simple definition: every item of the listing `q` asks for, in order. */
function expected(world: Map<number, Modelled>, q: Query): Item[] {
  const orgs = q.org === null ? USERS[q.reader] : [orgFilter(q) as number];
  const range = q.dated === 'none' ? undefined : { from: dayAt(q.offset), to: dayAt(q.offset + (q.dated === 'date' ? 0 : q.span)) };
  const items: Item[] = [];
  for (const s of world.values()) {
    const involved = s.creator === q.reader || s.collaborators.includes(q.reader) || s.joined.has(q.reader);
    if (!orgs.includes(s.org) || !(s.isPublic || involved)) continue;
    if (q.channel !== null && s.isPublic !== (q.channel === 'public')) continue;
    if (q.source === 'user' && !involved) continue;
    if (q.type !== null && s.type !== q.type) continue;
    if (q.completed !== null && s.completed !== (q.completed === 1)) continue;
    if (q.keyword !== null && !s.name.toLowerCase().includes(q.keyword.toLowerCase())) continue;
    if (range === undefined) items.push({ key: [s.startsAt, s.id, ''], ident: `${s.id}` });
    else for (const o of s.occurrences) if (o.date >= range.from && o.date <= range.to) items.push({ key: [o.startsAt, s.id, o.date], ident: `${s.id}/${o.date}` });
  }
  return items.sort((a, b) => compareKeys(a.key, b.key));
}

function url(q: Query, cursor: string | null): string {
  const p = new URLSearchParams({ limit: String(q.limit) });
  if (q.dated === 'date') p.set('date', dayAt(q.offset));
  if (q.dated === 'range') {
    p.set('day_start', dayAt(q.offset));
    p.set('day_ends', dayAt(q.offset + q.span));
  }
  for (const [k, v] of [['type', q.type], ['completed', q.completed], ['keyword', q.keyword], ['channel', q.channel], ['source', q.source], ['org_id', orgFilter(q)]] as const) if (v !== null) p.set(k, String(v));
  if (cursor !== null) p.set('cursor', cursor);
  return `/api/v1/sessions?${p.toString()}`;
}

type Page = { items: Item[]; next: string | null };
async function page(client: Client, q: Query, cursor: string | null): Promise<Page> {
  const res = await client.get<{ data: { id: number; starts_at: string; occurrence_date?: string }[]; next_cursor: string | null }>(url(q, cursor));
  expect(res.status, res.text).toBe(200);
  const items = res.body.data.map((d): Item => ({ key: [d.starts_at, d.id, d.occurrence_date ?? ''], ident: d.occurrence_date === undefined ? `${d.id}` : `${d.id}/${d.occurrence_date}` }));
  return { items, next: res.body.next_cursor };
}

describeEachDialect('every page of GET /sessions is the simple definition’s (visibility, filters, order, cursors)', (dialect) => {
  const t = useTestApp(dialect, USERS);
  const counts = new Map<string, number>();
  const tally = (name: string) => counts.set(name, (counts.get(name) ?? 0) + 1);
  afterAll(() => report(`[session pages ${dialect}] seed=${SEED} runs=${RUNS}: ${[...counts].map(([k, n]) => `${k} ${n}`).join(', ')}`));

  /** Re-reads a session's instants as its creator sees them (after a create or an edit). */
  async function instants(s: Pick<Modelled, 'id' | 'creator'>): Promise<Pick<Modelled, 'startsAt' | 'occurrences'>> {
    const client = t[s.creator];
    const one = await client.get<{ data: { starts_at: string } }>(`/api/v1/sessions/${s.id}`);
    const occ = await client.get<{ data: { occurrence_date: string; starts_at: string }[] }>(`/api/v1/sessions/${s.id}/occurrences?from=${WINDOW.from}&to=${WINDOW.to}`);
    expect(occ.status, occ.text).toBe(200);
    return { startsAt: one.body.data.starts_at, occurrences: occ.body.data.map((o) => ({ date: o.occurrence_date, startsAt: o.starts_at })) };
  }

  async function create(world: Map<number, Modelled>, x: typeof spec extends fc.Arbitrary<infer S> ? S : never, i: number): Promise<void> {
    const org = USERS[x.creator][x.orgPick % USERS[x.creator].length] as number;
    const collaborators = x.collaborate ? HANDLES.filter((h) => h !== x.creator && USERS[h].includes(org)).slice(0, 1) : [];
    const schedule = dayAt(x.offset);
    const series = x.series === null ? {} : { is_recurring: 1, occurrence: 'daily', recurring_start: schedule, recurring_ends: dayAt(x.offset + x.series) };
    const name = `${x.words.join(' ')} ${i}`;
    const body = { org_id: org, name, type: x.type, duration: 30, schedule, time: clock(x.minutes), timezone: x.zone, is_public: x.isPublic, collaborator: collaborators, ...series };
    const res = await t[x.creator].post<{ data: { id: number } }>('/api/v1/sessions', body);
    expect(res.status, res.text).toBe(201);
    const id = res.body.data.id;
    world.set(id, { id, creator: x.creator, org, name, type: x.type, isPublic: x.isPublic, completed: false, collaborators, joined: new Set(), ...(await instants({ id, creator: x.creator })) });
  }

  /** One edit through the API, then the model: what the world is after it. */
  async function apply(world: Map<number, Modelled>, e: Edit): Promise<void> {
    const s = [...world.values()][e.pick % Math.max(1, world.size)];
    if (s === undefined) return;
    const client = t[s.creator];
    tally(`edit: ${e.kind}`);
    if (e.kind === 'delete') {
      expect((await client.delete(`/api/v1/sessions/${s.id}`)).status).toBe(204);
      world.delete(s.id);
      return;
    }
    const name = `${WORDS[e.pick % WORDS.length] as string} renamed ${s.id}`;
    const change = { rename: { name }, visibility: { is_public: !s.isPublic }, complete: { status: 'completed' }, move: { time: clock((e.pick % 48) * 30) } }[e.kind];
    const res = await client.put(`/api/v1/sessions/${s.id}`, change);
    expect(res.status, res.text).toBe(200);
    if (e.kind === 'rename') s.name = name;
    if (e.kind === 'visibility') s.isPublic = !s.isPublic;
    if (e.kind === 'complete') s.completed = true;
    Object.assign(s, await instants(s));
  }

  /** Walks every page of `q`, applying an edit (if any) before each later page; each page must equal the definition at its time. */
  async function walk(world: Map<number, Modelled>, q: Query, edits: (Edit | null)[]): Promise<void> {
    let cursor: string | null = null;
    let after: Item['key'] | undefined;
    for (let n = 0; n < 200; n++) {
      const e = n === 0 ? null : edits[n % edits.length];
      if (e !== null && e !== undefined) await apply(world, e);
      const got = await page(t[q.reader], q, cursor);
      const rest = expected(world, q).filter((i) => after === undefined || compareKeys(i.key, after) > 0);
      expect(got.items.map((i) => i.ident), `${url(q, cursor)} as ${q.reader}`).toEqual(rest.slice(0, q.limit).map((i) => i.ident));
      expect(got.next === null, 'next_cursor exactly when more items follow').toBe(rest.length <= q.limit);
      tally(`page: ${q.dated}${e === null || e === undefined ? '' : ' after an edit'}`);
      if (got.next === null) return;
      cursor = got.next;
      after = rest[q.limit - 1]?.key;
    }
    throw new Error('paging did not end');
  }

  /** A first page asked for while an edit runs: only items of the world before or after, none missing that both hold. */
  async function during(world: Map<number, Modelled>, q: Query, e: Edit): Promise<void> {
    // No edit here moves a session in time, so an item's key is the same in both worlds.
    const before = expected(world, q);
    const [got] = await Promise.all([page(t[q.reader], q, null), apply(world, { ...e, kind: e.kind === 'move' ? 'rename' : e.kind })]);
    const afterwards = new Set(expected(world, q).map((i) => i.ident));
    const union = new Map([...before, ...expected(world, q)].map((i) => [i.ident, i]));
    const shown = got.items.map((i) => union.get(i.ident));
    for (const [k, item] of shown.entries()) expect(item, `${got.items[k]?.ident} is in neither world`).toBeDefined();
    const keys = shown.map((i) => (i as Item).key);
    for (let k = 1; k < keys.length; k++) expect(compareKeys(keys[k - 1] as Item['key'], keys[k] as Item['key']), 'in order').toBeLessThan(0);
    expect(shown.length).toBeLessThanOrEqual(q.limit);
    const last = keys.at(-1);
    const reached = (i: Item) => got.next === null || (last !== undefined && compareKeys(i.key, last) <= 0);
    const shownIdents = got.items.map((i) => i.ident);
    for (const i of before) if (afterwards.has(i.ident) && reached(i)) expect(shownIdents, `${i.ident} is in both worlds`).toContain(i.ident);
    tally('page during an edit');
  }

  it('equals the definition on both databases, with edits between and during pages', async () => {
    let round = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(spec, { minLength: 6, maxLength: 12 }),
        fc.array(fc.record({ who: fc.constantFrom(...HANDLES), pick: fc.nat() }), { maxLength: 3 }),
        fc.array(fc.record({ q: query, edits: fc.array(fc.option(edit, { freq: 2 }), { minLength: 1, maxLength: 3 }) }), { minLength: 2, maxLength: 4 }),
        fc.record({ q: query, e: edit }),
        async (specs, joins, walks, concurrent) => {
          const world = new Map<number, Modelled>();
          round++;
          for (const [i, x] of specs.entries()) await create(world, x, round * 100 + i);
          for (const j of joins) {
            const s = [...world.values()][j.pick % world.size] as Modelled;
            const res = await t[j.who].post(`/api/v1/sessions/${s.id}/join`);
            if (res.status === 200) s.joined.add(j.who);
          }
          try {
            for (const w of walks) await walk(world, w.q, w.edits);
            await during(world, concurrent.q, concurrent.e);
          } finally {
            for (const s of world.values()) await t[s.creator].delete(`/api/v1/sessions/${s.id}`);
          }
        },
      ),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
  });
});
