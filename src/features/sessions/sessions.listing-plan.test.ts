import { CompiledQuery, sql } from 'kysely';
import fc from 'fast-check';
import { beforeAll, expect, it, vi } from 'vitest';
import type { AuthenticatedUser } from '../../features/auth/auth.caller.js';
import { createSessionsService } from './sessions.service.js';
import type { ListSessionsQuery } from './sessions.route-schema.js';
import { toJson } from '../../storage/columns.js';
import { type Storage, openStorage } from '../../storage/database.js';
import { preparedReuses } from '../../storage/prepared.js';
import { describeEachDialect, useStorageFixture } from '../../../test/helpers/harness.js';
import { StatementCapture } from '../../../test/helpers/statements.js';
import { sessionRow } from '../../../test/helpers/session-row.js';
import { parseSerialized } from '../../../test/helpers/serialized.js';

/** Statements of one page at most: its keys (with the rare-keyword lookup and the series outside the index), rows, collaborators, next dates, counts. */
const MAX_PAGE_STATEMENTS = 7;

/** The instant the fixture's index was built at, as the server's indexer would have at start-up. */
const INDEXED_AT = new Date('2026-06-01T00:00:00Z');

/** Tables that grow with what people store; reading one without an index makes a page's cost grow with it. */
const GROWING = ['sessions', 'session_occurrences', 'session_participants', 'session_collaborators', 'session_exceptions', 'users'];

/**
 * Every statement a listing issues reads the tables that grow through an index: the page
 * costs about the rows it shows, whatever other members of the org stored. Plans come from
 * the service's own statements at 20,000 sessions (the reader owns 400) and their indexed occurrences, with the
 * statistics the server refreshes at start-up.
 */
describeEachDialect('session listing plans', (dialect) => {
  const fixture = useStorageFixture(dialect);
  let storage: Storage;
  let reader: AuthenticatedUser;
  let otherReader: AuthenticatedUser;

  beforeAll(async () => {
    storage = fixture.storage;
    reader = { ...fixture.user, orgIds: [1, 2] };
    await storage.db.insertInto('orgs').values({ id: 2, created_at: '2026-01-01T00:00:00.000Z' }).execute();
    const other = await storage.db.insertInto('users').values({ handle: 'other', created_at: '2026-01-01T00:00:00.000Z' }).returning('id').executeTakeFirstOrThrow();
    otherReader = { id: other.id, handle: 'other', orgIds: [2], timezone: 'UTC' };
    const rows = [];
    for (let n = 1; n <= 20_000; n++) {
      // Twenty series began years before the index was written: it holds them only INDEX_PAST_DAYS back.
      const old = n % 1000 === 7;
      const day = old ? '2019-03-01' : `2026-${String(1 + (n % 12)).padStart(2, '0')}-${String(1 + (n % 28)).padStart(2, '0')}`;
      const series = n % 10 === 0 || old;
      rows.push(
        sessionRow(`session ${n}${n % 12 === 0 ? ' review' : ''}`, n % 50 === 0 ? fixture.user.id : other.id, {
          org_id: 1 + (n % 2),
          schedule: day,
          starts_at: `${day}T09:00:00.000Z`,
          ends_at: `${day}T09:25:00.000Z`,
          is_public: n % 4 === 0 ? 0 : 1,
          status: n % 7 === 0 ? 'completed' : 'waiting',
          ...(series ? { is_recurring: 1, occurrence: 'daily', recurring_start: day, recurring_ends: null, recurring_days: toJson([]) } : {}),
        }),
      );
    }
    for (let i = 0; i < rows.length; i += 500) await storage.db.insertInto('sessions').values(rows.slice(i, i + 500)).execute();
    // What the server does at start: index the stored sessions, refresh statistics.
    const service = createSessionsService(storage);
    while ((await service.indexStep(2_000, INDEXED_AT)) > 0);
    await storage.refreshStatistics();
    if (dialect === 'postgres') await sql`analyze`.execute(storage.db);
  }, 240_000);

  /** The plans of a page's statements; `generic`: PostgreSQL's plan for any parameters, which a named statement may keep. */
  async function plansOf(query: ListSessionsQuery, generic = false): Promise<{ sql: string; plan: string }[]> {
    const capture = new StatementCapture();
    const captured = openStorage({ databaseUrl: fixture.database.url }, { plugins: [capture] });
    const result = parseSerialized(await createSessionsService(captured).list(reader, query).finally(() => captured.close()));
    expect(result.data.length).toBeGreaterThan(0);
    const prefix = dialect === 'sqlite' ? 'explain query plan ' : 'explain ';
    const out = [];
    for (const compiled of capture.compiled(storage.db)) {
      const rows = generic && dialect === 'postgres' ? await genericPlan(compiled) : (await storage.db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(prefix + compiled.sql, [...compiled.parameters]))).rows;
      out.push({ sql: compiled.sql, plan: rows.map((r) => String(r.detail ?? r['QUERY PLAN'])).join(' | ') });
    }
    return out;
  }

  /** EXPLAIN of a parameters' value is planned for that value; a prepared statement under force_generic_plan is not. */
  async function genericPlan(compiled: CompiledQuery): Promise<Record<string, unknown>[]> {
    const literal = (v: unknown): string => (Array.isArray(v) ? `array[${v.map(literal).join(', ')}]` : typeof v === 'number' ? String(v) : `'${String(v).replaceAll("'", "''")}'`);
    return storage.db.connection().execute(async (db) => {
      await sql`set plan_cache_mode = force_generic_plan`.execute(db);
      try {
        await db.executeQuery(CompiledQuery.raw(`prepare listing_plan as ${compiled.sql}`));
        return (await db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(`explain execute listing_plan(${compiled.parameters.map(literal).join(', ')})`))).rows;
      } finally {
        // Only this one: the connection may hold the storage's named statements (postgres.named.ts).
        await sql`deallocate listing_plan`.execute(db);
        await sql`reset plan_cache_mode`.execute(db);
      }
    });
  }

  const shapes: [string, ListSessionsQuery][] = [
    ['unfiltered', { limit: 50 }],
    ['keyword', { keyword: 'review', limit: 50 }],
    ['short keyword', { keyword: 'on', limit: 50 }],
    ['date', { date: '2026-06-10', limit: 50 }],
    ['31-day range', { day_start: '2026-06-01', day_ends: '2026-07-01', limit: 50 }],
    ['completed range', { day_start: '2026-06-01', day_ends: '2026-07-01', completed: 1, limit: 50 }],
    ['source=user range', { day_start: '2026-06-01', day_ends: '2026-07-01', source: 'user', limit: 50 }],
    ['keyword range', { day_start: '2026-06-01', day_ends: '2026-07-01', keyword: 'review', limit: 50 }],
    ['date before the index', { date: '2020-01-01', limit: 50 }],
  ];

  async function statementsOf(query: ListSessionsQuery): Promise<string[]> {
    const capture = new StatementCapture();
    const captured = openStorage({ databaseUrl: fixture.database.url }, { plugins: [capture] });
    const result = parseSerialized(await createSessionsService(captured).list(reader, query).finally(() => captured.close()));
    expect(result.data).toHaveLength(query.limit ?? 0);
    return capture.compiled(storage.db).map((c) => c.sql);
  }

  // Issue 12: a page is read in a fixed number of statements, however many items it shows.
  it.each(shapes.filter(([name]) => name !== 'date before the index'))('%s: a page of 50 runs as few statements as a page of 5', async (_name, query) => {
    const five = await statementsOf({ ...query, limit: 5 });
    const fifty = await statementsOf(query);
    expect(fifty.length, fifty.join('\n')).toBe(five.length);
    expect(fifty.length, fifty.join('\n')).toBeLessThanOrEqual(MAX_PAGE_STATEMENTS);
  });

  it.each(shapes)('%s: every growing table is read through an index', async (_name, query) => {
    for (const { sql: text, plan } of await plansOf(query)) {
      for (const table of GROWING) {
        const scan = dialect === 'sqlite' ? new RegExp(`SCAN ${table}(?! USING)( |$)`) : new RegExp(`Seq Scan on ${table} .*rows=(\\d{4,})`);
        expect(plan, `${text}\n${plan}`).not.toMatch(scan);
      }
    }
  });

  // A common keyword is tested on the rows the visibility streams walk: an org's public
  // sessions from the index entries; the reader's personal ones (few next to an org's)
  // through session_access's index in page order, each looked up by primary key.
  it('an undated keyword page tests the name on index entries, personal rows by key', async () => {
    // Index-only scans need the visibility map that autovacuum keeps on a running server.
    if (dialect === 'postgres') await sql`vacuum analyze sessions`.execute(storage.db);
    const streams = (await plansOf({ keyword: 'review', limit: 50 })).filter((p) => p.sql.includes('"stream" union'));
    expect(streams).toHaveLength(1);
    const { sql: text, plan } = streams[0] as { sql: string; plan: string };
    if (dialect === 'sqlite') {
      expect(plan, `${text}\n${plan}`).toMatch(/SEARCH sessions USING COVERING INDEX sessions_public_keys_idx/);
      expect(plan, `${text}\n${plan}`).toMatch(/SEARCH session_access USING COVERING INDEX session_access_keys_idx/);
      expect(plan, `${text}\n${plan}`).not.toMatch(/SEARCH sessions USING INDEX/);
    } else {
      expect(plan, `${text}\n${plan}`).toMatch(/Index Only Scan using sessions_public_keys_idx/);
      expect(plan, `${text}\n${plan}`).toMatch(/Index Only Scan using session_access_keys_idx/);
      expect(plan, `${text}\n${plan}`).not.toMatch(/(?<!Only )Index Scan using sessions_public_keys_idx/);
    }
  });

  // The streams come in index order and are merged as they come: nothing sorts them again
  // (SQLite sorted a stream cut by its own LIMIT into a temporary B-tree before merging).
  it.each(shapes.filter(([name]) => name === 'unfiltered' || name === 'keyword'))('%s: the undated streams are merged in index order, never sorted', async (_name, query) => {
    const streams = (await plansOf(query)).filter((p) => p.sql.includes('"stream" union'));
    expect(streams).toHaveLength(1);
    const { sql: text, plan } = streams[0] as { sql: string; plan: string };
    expect(plan, `${text}\n${plan}`).toMatch(dialect === 'sqlite' ? /MERGE \(UNION ALL\)/ : /Merge Append/);
    expect(plan, `${text}\n${plan}`).not.toMatch(dialect === 'sqlite' ? /TEMP B-TREE/ : /Sort {2}\(/);
  });

  // With `type` or `completed=1` an org's public stream walks a partial index of those sessions,
  // which the statement's literals match (a named statement's generic plan too): 0032 on
  // PostgreSQL, 0034 on SQLite.
  const filtered: [ListSessionsQuery, string][] = [
    [{ completed: 1 }, 'sessions_public_completed_idx'],
    [{ keyword: 'review', completed: 1 }, 'sessions_public_completed_idx'],
    [{ type: 'standard' }, 'sessions_public_type_idx'],
    [{ keyword: 'review', type: 'standard' }, 'sessions_public_type_idx'],
  ];
  it.each(filtered)('an undated page (%o) walks the public sessions of the filter, %s', async (filter, index) => {
    if (dialect === 'postgres') await sql`vacuum analyze sessions`.execute(storage.db);
    const streams = (await plansOf({ ...filter, limit: 50 }, true)).filter((p) => p.sql.includes('"stream" union'));
    expect(streams).toHaveLength(1);
    const { sql: text, plan } = streams[0] as { sql: string; plan: string };
    const walk = dialect === 'sqlite' ? `SEARCH sessions USING COVERING INDEX ${index} ` : `Index Only Scan using ${index}`;
    expect(plan, `${text}\n${plan}`).toContain(walk);
    expect(plan, `${text}\n${plan}`).not.toMatch(/sessions_public_keys_idx/);
  });

  // Beside the public streams, a dated page reads the reader's own private occurrences in page
  // order from their index (0031), and only the sessions others created by session.
  it('a range page reads the reader\'s own private occurrences from their index in page order', async () => {
    if (dialect === 'postgres') await sql`vacuum analyze session_occurrences`.execute(storage.db);
    const pages = (await plansOf({ day_start: '2026-06-01', day_ends: '2026-07-01', limit: 50 })).filter((p) => p.sql.includes('"stream" union'));
    expect(pages).toHaveLength(1);
    const { sql: text, plan } = pages[0] as { sql: string; plan: string };
    expect(text).toContain('"session_access"."created_by" <>');
    if (dialect === 'sqlite') expect(plan, `${text}\n${plan}`).toMatch(/SEARCH session_occurrences USING COVERING INDEX session_occurrences_own_private_idx \(created_by=\? AND starts_at>\? AND starts_at<\?\)/);
    else expect(plan, `${text}\n${plan}`).toMatch(/Index Only Scan using session_occurrences_own_private_idx/);
  });

  // The listing's statements are built once per shape (storage/prepared.ts). Whatever the
  // filters, cursor and reader, a page must be what statements built for the call give.
  it('statements prepared once per shape list exactly what statements built for each call list', async () => {
    // Any plugin makes every prepared statement be built for its call: the reference.
    const built = openStorage({ databaseUrl: fixture.database.url }, { plugins: [{ transformQuery: (a) => a.node, transformResult: (a) => Promise.resolve(a.result) }] });
    const reference = createSessionsService(built);
    const service = createSessionsService(storage);
    const days = fc.integer({ min: 0, max: 400 }).map((n) => new Date(Date.UTC(2026, 0, 1 + n)).toISOString().slice(0, 10));
    // Each filter in one query of four, so that most pages hold something.
    const sometimes = <T>(values: readonly T[]) => fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom(...values) });
    const filters = fc.record({
      channel: sometimes(['public', 'private'] as const),
      source: sometimes(['user', 'organization'] as const),
      type: sometimes(['drop-in', 'standard'] as const),
      completed: sometimes([0, 1] as const),
      keyword: sometimes(['review', 'on', 'session 1', 'zzz']),
      org_id: sometimes([1, 2]),
    });
    const range = fc.option(
      fc.oneof(
        days.map((date) => ({ date })),
        fc.tuple(days, fc.integer({ min: 0, max: 40 })).map(([day, span]) => ({ day_start: day, day_ends: new Date(Date.parse(day) + span * 86_400_000).toISOString().slice(0, 10) })),
      ),
      { nil: undefined },
    );
    const queries: fc.Arbitrary<ListSessionsQuery> = fc.tuple(filters, range, fc.integer({ min: 1, max: 60 })).map(([f, r, limit]) => ({ ...f, ...r, limit }));
    let ran = 0;
    const before = preparedReuses();
    try {
      await fc.assert(
        fc.asyncProperty(queries, fc.constantFrom(reader, otherReader), async (query, user) => {
          if (query.org_id !== undefined && !user.orgIds.includes(query.org_id)) return;
          ran++;
          // Twice, so that the second call runs the shape the first one built.
          await service.list(user, query);
          const first = parseSerialized(await service.list(user, query));
          expect(first).toEqual(parseSerialized(await reference.list(user, query)));
          if (first.next_cursor !== null) {
            const next = { ...query, cursor: first.next_cursor };
            expect(parseSerialized(await service.list(user, next))).toEqual(parseSerialized(await reference.list(user, next)));
          }
        }),
        { numRuns: 50 },
      );
    } finally {
      await built.close();
    }
    // Each second call ran at least its keys from a shape the first one built.
    expect(ran).toBeGreaterThan(20);
    expect(preparedReuses() - before).toBeGreaterThanOrEqual(ran);
  }, 120_000);

  // Issue 36: each undated key comes with what its record counts (a series' next dates among
  // them), so a page whose rows are kept is its keys statement alone.
  it.each(shapes.filter(([name]) => name === 'unfiltered' || name === 'keyword'))('%s: a page of kept rows is one statement', async (_name, query) => {
    const capture = new StatementCapture();
    const captured = openStorage({ databaseUrl: fixture.database.url }, { plugins: [capture] });
    // Listed on the day the index was built, which it reaches as the server's indexer keeps it: indexing
    // 2,000 daily series up to the real today instead took most of this file's time.
    vi.useFakeTimers({ toFake: ['Date'], now: INDEXED_AT });
    try {
      const service = createSessionsService(captured);
      const first = parseSerialized(await service.list(reader, query));
      expect(first.data.filter((s) => s.is_recurring === 1).length).toBeGreaterThan(0);
      capture.reset();
      const again = parseSerialized(await service.list(reader, query));
      expect(again).toEqual(first);
      const statements = capture.compiled(storage.db).map((c) => c.sql);
      expect(statements, statements.join('\n')).toHaveLength(1);
    } finally {
      vi.useRealTimers();
      await captured.close();
    }
  });
});
