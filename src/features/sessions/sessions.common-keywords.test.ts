import { beforeAll, describe, expect, it } from 'vitest';
import { CommonKeywords } from './sessions.common-keywords.js';
import { MAX_NAMED_SESSIONS } from './sessions.listing-filters.js';
import { createSessionsService } from './sessions.service.js';
import type { ListSessionsQuery } from './sessions.schema.js';
import { type Storage, openStorage } from '../../storage/database.js';
import { describeEachDialect, useStorageFixture } from '../../../test/helpers/harness.js';
import { StatementCapture } from '../../../test/helpers/statements.js';
import { sessionRow } from '../../../test/helpers/session-row.js';

/** The substring index's lookup, as each dialect's storage words it (sessionIdsNamed). */
const LOOKUP = /sessions_search|search_name" like|search_name like/;

describeEachDialect('common keywords', (dialect) => {
  const fixture = useStorageFixture(dialect);
  let captured: Storage;
  let capture: StatementCapture;

  beforeAll(async () => {
    const { storage, user } = fixture;
    const rows = [];
    // One more than the index hands out by id: "review" is a common keyword.
    for (let n = 1; n <= MAX_NAMED_SESSIONS + 1; n++) {
      const minute = String(n % 60).padStart(2, '0');
      rows.push(sessionRow(`Code review #${n}`, user.id, { starts_at: `2026-01-02T09:${minute}:00.000Z` }));
    }
    rows.push(sessionRow('Zebra crossing', user.id), sessionRow('zebra stripes', user.id));
    for (let i = 0; i < rows.length; i += 200) await storage.db.insertInto('sessions').values(rows.slice(i, i + 200)).execute();
    capture = new StatementCapture();
    captured = openStorage({ databaseUrl: fixture.database.url }, { plugins: [capture] });
    return () => captured.close();
  });

  const lookups = () => capture.compiled(fixture.storage.db).filter((q) => LOOKUP.test(q.sql)).length;
  const names = (page: { data: { name: string }[] }) => page.data.map((s) => s.name);

  it('asks the substring index about a common keyword once, and lists the same pages after', async () => {
    const service = createSessionsService(captured);
    const query: ListSessionsQuery = { keyword: 'REVIEW', limit: 20 };
    const before = lookups();
    const first = await service.list(fixture.user, query);
    expect(lookups()).toBe(before + 1);
    const again = await service.list(fixture.user, query);
    const next = await service.list(fixture.user, { ...query, cursor: again.next_cursor ?? undefined });
    // The verdict is kept: neither the same page nor the next one asks again.
    expect(lookups()).toBe(before + 1);
    // Only for that user: another one's search asks for itself.
    await service.list({ ...fixture.user, id: fixture.user.id + 1000, handle: 'someone-else' }, query);
    expect(lookups()).toBe(before + 2);
    expect(names(again)).toEqual(names(first));
    expect(first.data).toHaveLength(20);
    expect(names(first).every((n) => n.startsWith('Code review'))).toBe(true);
    expect(next.data).toHaveLength(20);
    expect(names(next).some((n) => names(first).includes(n))).toBe(false);
  });

  it('never keeps the ids of a rare keyword: a session named later is found at once', async () => {
    const service = createSessionsService(captured);
    const before = lookups();
    expect(names(await service.list(fixture.user, { keyword: 'zebra' })).sort()).toEqual(['Zebra crossing', 'zebra stripes']);
    await fixture.storage.db.insertInto('sessions').values(sessionRow('ZEBRA herd', fixture.user.id)).execute();
    expect(names(await service.list(fixture.user, { keyword: 'zebra' })).sort()).toEqual(['ZEBRA herd', 'Zebra crossing', 'zebra stripes']);
    expect(lookups()).toBe(before + 2);
  });

  it('lists what a keyword matches now when it got rare while judged common', async () => {
    const service = createSessionsService(captured);
    expect((await service.list(fixture.user, { keyword: 'review', limit: 5 })).data).toHaveLength(5);
    await fixture.storage.db.deleteFrom('sessions').where('name', 'like', 'Code review #%').where('name', '<>', 'Code review #7').execute();
    const page = await service.list(fixture.user, { keyword: 'review', limit: 5 });
    expect(names(page)).toEqual(['Code review #7']);
    expect(page.next_cursor).toBeNull();
  });
});

describe('CommonKeywords', () => {
  it('forgets a verdict after its time', () => {
    const memo = new CommonKeywords(1_000, 10);
    memo.add('review', 0);
    expect(memo.has('review', 999)).toBe(true);
    expect(memo.has('review', 1_000)).toBe(false);
    expect(memo.has('review', 1)).toBe(false);
  });

  it('keeps at most its bound, dropping the oldest verdict first', () => {
    const memo = new CommonKeywords(60_000, 3);
    for (const word of ['a', 'b', 'c', 'd']) memo.add(word, 0);
    expect(['a', 'b', 'c', 'd'].map((w) => memo.has(w, 1))).toEqual([false, true, true, true]);
    // Asserting a verdict again makes it the newest.
    memo.add('b', 2);
    memo.add('e', 2);
    expect(['b', 'c', 'd', 'e'].map((w) => memo.has(w, 3))).toEqual([true, false, true, true]);
  });
});
