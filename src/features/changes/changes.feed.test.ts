import { expect, it } from 'vitest';
import { type Client, describeEachDialect, useTestApp } from '../../../test/helpers/harness.js';
import { encodeCursor } from '../../toolkit/paging.js';
import { HEAD_TTL_MS } from './changes.service.js';
import { createChangesRepository } from '../../changelog/changelog.repository.js';

interface Entry {
  type: 'session' | 'task';
  id: string;
  deleted: boolean;
  record: { id: number | string; name?: string; context?: string; session_id?: number | null } | null;
  changed_at: string;
}
interface Page {
  data: Entry[];
  next_cursor: string;
}

const session = (name: string, isPublic: boolean, orgId = 1) => ({
  org_id: orgId, name, type: 'standard', duration: 30, schedule: '2026-05-01', time: '9:00 AM', is_public: isPublic,
});
const DAY = 86_400_000;

describeEachDialect('GET /changes', (dialect) => {
  const t = useTestApp(dialect, { alice: [1], bob: [1], carol: [2] });

  /** One page, after the sequencer gave every committed change its position (the server does so every 200 ms). */
  async function page(client: Client, cursor?: string, limit?: number): Promise<Page> {
    await createChangesRepository(t.storage).sequence();
    // Without a data version (PostgreSQL) the feed reads the log's head at most every HEAD_TTL_MS.
    if (t.storage.dataVersion() === undefined) await new Promise((r) => setTimeout(r, HEAD_TTL_MS + 10));
    const query = new URLSearchParams({ ...(cursor === undefined ? {} : { cursor }), ...(limit === undefined ? {} : { limit: String(limit) }) });
    const res = await client.get<Page>(`/api/v1/changes?${query.toString()}`);
    expect(res.status, res.text).toBe(200);
    expect(typeof res.body.next_cursor).toBe('string');
    // Each record at most once per page.
    const keys = res.body.data.map((e) => `${e.type}:${e.id}`);
    expect(new Set(keys).size).toBe(keys.length);
    return res.body;
  }

  /** A full sync through every page; returns what it listed and the cursor after it. */
  async function fullSync(client: Client, limit: number, between?: () => Promise<void>) {
    const entries: Entry[] = [];
    let p = await page(client, undefined, limit);
    entries.push(...p.data);
    await between?.();
    // The cursor says when the full sync is over and the log follows (its second field, 2).
    const syncing = (cursor: string) => (JSON.parse(Buffer.from(cursor, 'base64url').toString()) as unknown[])[1] !== 2;
    for (let n = 0; syncing(p.next_cursor) && n < 100; n++) {
      p = await page(client, p.next_cursor, limit);
      entries.push(...p.data);
    }
    return { entries, cursor: p.next_cursor };
  }

  /** Reads the feed until it is empty. */
  async function drain(client: Client, cursor: string, limit = 100) {
    const pages: Entry[][] = [];
    let next = cursor;
    for (let n = 0; n < 100; n++) {
      const p = await page(client, next, limit);
      next = p.next_cursor;
      if (p.data.length === 0) break;
      pages.push(p.data);
    }
    return { pages, entries: pages.flat(), cursor: next };
  }

  const key = (e: Entry) => `${e.type}:${e.id}${e.deleted ? ':deleted' : ''}`;

  it('gives a full sync of what the user sees, then only what changed, each record once per page in its current state', async () => {
    const mine = (await t.alice.post('/api/v1/sessions', session('alice public', true))).body.data;
    const minePrivate = (await t.alice.post('/api/v1/sessions', session('alice private', false))).body.data;
    const bobsPublic = (await t.bob.post('/api/v1/sessions', session('bob public', true))).body.data;
    const bobsPrivate = (await t.bob.post('/api/v1/sessions', session('bob private', false))).body.data;
    const task = (await t.alice.post('/api/v1/tasks', { context: 'one', session_id: mine.id })).body.data;
    const bobsTask = (await t.bob.post('/api/v1/tasks', { context: 'bobs', session_id: bobsPublic.id })).body.data;

    const sync = await fullSync(t.alice, 1);
    const listed = sync.entries.map(key);
    expect(listed).toEqual(expect.arrayContaining([`session:${mine.id}`, `session:${minePrivate.id}`, `session:${bobsPublic.id}`, `task:${task.id}`]));
    expect(listed).not.toContain(`session:${bobsPrivate.id}`);
    expect(listed).not.toContain(`task:${bobsTask.id}`);
    expect(sync.entries.every((e) => !e.deleted && e.record !== null && String(e.record.id) === e.id)).toBe(true);
    expect(new Set(listed).size).toBe(listed.length);
    expect((await drain(t.alice, sync.cursor)).entries).toEqual([]);

    await t.alice.put(`/api/v1/tasks/${task.id}`, { context: 'two' });
    await t.alice.put(`/api/v1/tasks/${task.id}`, { context: 'three' });
    await t.bob.put(`/api/v1/sessions/${bobsPrivate.id}`, { name: 'still private' });
    await t.bob.put(`/api/v1/tasks/${bobsTask.id}`, { context: 'not alice’s' });
    await t.bob.put(`/api/v1/sessions/${bobsPublic.id}`, { name: 'bob renamed' });
    const changed = await drain(t.alice, sync.cursor);
    expect(changed.entries.map(key)).toEqual([`task:${task.id}`, `session:${bobsPublic.id}`]);
    expect(changed.entries[0]?.record?.context).toBe('three');
    expect(changed.entries[1]?.record?.name).toBe('bob renamed');
    expect((await drain(t.alice, changed.cursor)).entries).toEqual([]);
  });

  it('tells a user who could see a session that it is gone, deleted or hidden, and nobody else', async () => {
    const hidden = (await t.bob.post('/api/v1/sessions', session('soon private', true))).body.data;
    const removed = (await t.bob.post('/api/v1/sessions', session('soon deleted', true))).body.data;
    const never = (await t.bob.post('/api/v1/sessions', session('never seen', false))).body.data;
    const startAlice = (await drain(t.alice, (await fullSync(t.alice, 500)).cursor)).cursor;
    const startCarol = (await fullSync(t.carol, 500)).cursor;

    await t.bob.put(`/api/v1/sessions/${hidden.id}`, { is_public: false });
    await t.bob.delete(`/api/v1/sessions/${removed.id}`);
    await t.bob.delete(`/api/v1/sessions/${never.id}`);
    const seen = await drain(t.alice, startAlice);
    expect(seen.entries.map(key)).toEqual([`session:${hidden.id}:deleted`, `session:${removed.id}:deleted`]);
    expect(seen.entries.every((e) => e.record === null)).toBe(true);
    // Another org's member sees nothing of org 1, not even deletions.
    expect((await drain(t.carol, startCarol)).entries).toEqual([]);

    // Visible again: an upsert.
    await t.bob.put(`/api/v1/sessions/${hidden.id}`, { is_public: true });
    expect((await drain(t.alice, seen.cursor)).entries.map(key)).toEqual([`session:${hidden.id}`]);
  });

  it('tells about tasks deleted, and about a session one joined and left', async () => {
    const s = (await t.bob.post('/api/v1/sessions', session('to join', false))).body.data;
    const start = (await drain(t.alice, (await fullSync(t.alice, 500)).cursor)).cursor;
    const task = (await t.alice.post('/api/v1/tasks', { context: 'short-lived', session_id: (await t.alice.post('/api/v1/sessions', session('mine', false))).body.data.id })).body.data;
    await t.alice.delete(`/api/v1/tasks/${task.id}`);
    const after = await drain(t.alice, start);
    expect(after.entries.filter((e) => e.type === 'task').map(key)).toEqual([`task:${task.id}:deleted`]);
    // Bob's private session: collaborating makes it visible to alice, dropping her hides it again.
    await t.bob.put(`/api/v1/sessions/${s.id}`, { collaborator: ['alice'] });
    const shared = await drain(t.alice, after.cursor);
    expect(shared.entries.map(key)).toEqual([`session:${s.id}`]);
    await t.bob.put(`/api/v1/sessions/${s.id}`, { collaborator: [] });
    expect((await drain(t.alice, shared.cursor)).entries.map(key)).toEqual([`session:${s.id}:deleted`]);
  });

  it('tells each owner about their tasks detached from a deleted session, with a new updated_at and ETag', async () => {
    const s = (await t.alice.post('/api/v1/sessions', session('going away', true))).body.data;
    const series = (await t.alice.post('/api/v1/sessions', { ...session('series', true), is_recurring: 1, occurrence: 'daily' })).body.data;
    const single = (await t.alice.post('/api/v1/sessions', { ...session('single', true), is_recurring: 1, occurrence: 'daily', recurring_ends: '2026-05-01' })).body.data;
    const bobsTask = (await t.bob.post('/api/v1/tasks', { context: 'bob in it', session_id: s.id })).body.data;
    const alicesTask = (await t.alice.post('/api/v1/tasks', { context: 'alice in it', session_id: s.id })).body.data;
    const inSeries = (await t.bob.post('/api/v1/tasks', { context: 'in the series', session_id: series.id })).body.data;
    const inSingle = (await t.bob.post('/api/v1/tasks', { context: 'in the single', session_id: single.id })).body.data;
    const before = await t.bob.get<{ data: { updated_at: string } }>(`/api/v1/tasks/${bobsTask.id}`);
    const startBob = (await drain(t.bob, (await fullSync(t.bob, 500)).cursor)).cursor;
    const startAlice = (await drain(t.alice, (await fullSync(t.alice, 500)).cursor)).cursor;
    await new Promise((r) => setTimeout(r, 5));

    expect((await t.alice.delete(`/api/v1/sessions/${s.id}`)).status).toBe(204);
    // Ending a series before its first occurrence deletes it too.
    expect((await t.alice.delete(`/api/v1/sessions/${series.id}?scope=following&date=2026-05-01`)).status).toBe(204);
    // And so does removing its last remaining occurrence.
    expect((await t.alice.delete(`/api/v1/sessions/${single.id}?scope=occurrence&date=2026-05-01`)).status).toBe(204);

    const bobs = await drain(t.bob, startBob);
    expect(bobs.entries.map(key)).toEqual([
      `session:${s.id}:deleted`, `task:${bobsTask.id}`, `session:${series.id}:deleted`, `task:${inSeries.id}`, `session:${single.id}:deleted`, `task:${inSingle.id}`,
    ]);
    expect(bobs.entries.filter((e) => e.type === 'task').map((e) => e.record?.session_id)).toEqual([null, null, null]);
    const alices = await drain(t.alice, startAlice);
    expect(alices.entries.map(key)).toEqual([`session:${s.id}:deleted`, `task:${alicesTask.id}`, `session:${series.id}:deleted`, `session:${single.id}:deleted`]);

    const after = await t.bob.get<{ data: { session_id: unknown; updated_at: string } }>(`/api/v1/tasks/${bobsTask.id}`);
    expect(after.body.data.session_id).toBeNull();
    expect(after.body.data.updated_at > before.body.data.updated_at).toBe(true);
    expect(after.headers.etag).not.toBe(before.headers.etag);
  });

  it('loses nothing that changes during a full sync', async () => {
    const first = (await t.alice.post('/api/v1/sessions', session('during sync', false))).body.data;
    let changedTask = '';
    const sync = await fullSync(t.alice, 1, async () => {
      await t.alice.put(`/api/v1/sessions/${first.id}`, { name: 'changed during sync' });
      changedTask = (await t.alice.post('/api/v1/tasks', { context: 'made during sync', session_id: first.id })).body.data.id;
    });
    const after = await drain(t.alice, sync.cursor);
    expect(after.entries.map(key)).toEqual(expect.arrayContaining([`session:${first.id}`, `task:${changedTask}`]));
  });

  it('pages by limit without skipping, and never shows another user’s task', async () => {
    const start = (await drain(t.alice, (await fullSync(t.alice, 500)).cursor)).cursor;
    const s = (await t.alice.post('/api/v1/sessions', session('many', false))).body.data;
    const made: string[] = [];
    for (let i = 0; i < 7; i++) made.push((await t.alice.post('/api/v1/tasks', { context: `t${i}`, session_id: s.id })).body.data.id);
    await t.bob.post('/api/v1/tasks', { context: 'bob’s', session_id: (await t.bob.post('/api/v1/sessions', session('b', true))).body.data.id });
    const read = await drain(t.alice, start, 3);
    expect(read.pages.every((p) => p.length <= 3)).toBe(true);
    expect(read.entries.filter((e) => e.type === 'task').map((e) => e.id)).toEqual(made);
    const bobsSession = read.entries.filter((e) => e.type === 'session' && e.id !== String(s.id));
    expect(bobsSession).toHaveLength(1);
  });

  it('answers 410 sync-expired for a cursor older than 7 days, 422 for one it did not issue', async () => {
    const sync = await fullSync(t.alice, 500);
    const [head] = JSON.parse(Buffer.from(sync.cursor, 'base64url').toString()) as [number];
    const old = await t.alice.get(`/api/v1/changes?cursor=${encodeCursor([head, 2, '', 0, Date.now() - 7 * DAY - 60_000])}`);
    expect(old.status).toBe(410);
    expect(old.headers['content-type']).toContain('application/problem+json');
    expect(old.body.type).toMatch(/^http:\/\/[^/]+\/problems\/sync-expired$/);
    expect((await t.alice.get(`/api/v1/changes?cursor=${encodeCursor([head, 2, '', 0, Date.now() - 6 * DAY])}`)).status).toBe(200);
    for (const bad of ['nope', encodeCursor([1, 9, '', 0, Date.now()]), encodeCursor([1, 2]), encodeCursor([-1, 2, '', 0, Date.now()])]) {
      const res = await t.alice.get(`/api/v1/changes?cursor=${bad}`);
      expect(res.status, bad).toBe(422);
    }
    expect((await t.alice.get('/api/v1/changes?limit=501')).status).toBe(422);
    expect((await t.alice.get('/api/v1/changes?limit=0')).status).toBe(422);
    expect((await t.anonymous.get('/api/v1/changes')).status).toBe(401);
  });

  it('passes over many changes the reader may not see, a bounded number per request', async () => {
    const start = (await drain(t.alice, (await fullSync(t.alice, 500)).cursor)).cursor;
    const s = (await t.bob.post('/api/v1/sessions', session('bob hidden', false))).body.data;
    // Over SCAN_LIMIT invisible changes, then one alice sees.
    await t.storage.transaction(async (trx) => {
      const rows = Array.from({ length: 1_200 }, () => ({
        kind: 'session' as const, action: 'updated' as const, record_id: s.id, org_id: 1, owner_id: s.id, audience: null, actor_id: 1, changed_at: new Date().toISOString(),
      }));
      for (let i = 0; i < rows.length; i += 200) await trx.insertInto('changes').values(rows.slice(i, i + 200).map((r) => ({ ...r, owner_id: 1, actor_id: 1 }))).execute();
    });
    const task = (await t.alice.post('/api/v1/tasks', { context: 'after the noise', session_id: (await t.alice.post('/api/v1/sessions', session('x', false))).body.data.id })).body.data;
    const read = await drain(t.alice, start);
    expect(read.entries.map(key)).toContain(`task:${task.id}`);
    expect(read.entries.map(key)).not.toContain(`session:${s.id}`);
  });
});
