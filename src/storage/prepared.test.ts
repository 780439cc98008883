import { inspect } from 'node:util';
import fc from 'fast-check';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely';
import { beforeAll, expect, it } from 'vitest';
import type { Db, Storage } from './database.js';
import { prepared } from './prepared.js';
import type { Database } from './tables.js';
import { describeEachDialect, useStorageFixture } from '../../test/helpers/harness.js';
import { sessionRow } from '../../test/helpers/session-row.js';

interface Query {
  ids: number[];
  name?: string;
  org: number;
  /** Shape: picks the comparison. */
  completed?: 0 | 1;
  after?: { id: number };
  limit: number;
}

const query = prepared(['ids', 'name', 'org', 'after.id', 'limit'], (db: Db, q: Query) => {
  let select = db
    .selectFrom('sessions')
    .select(['id', 'name', 'status'])
    .where((eb) => eb.or([eb('id', 'in', q.ids), eb('org_id', '=', q.org)]));
  if (q.name !== undefined) select = select.where('name', '=', q.name);
  if (q.completed !== undefined) select = select.where('status', q.completed === 1 ? '=' : '<>', 'completed');
  if (q.after !== undefined) select = select.where('id', '>', q.after.id);
  return select.orderBy('id').limit(q.limit);
});

const queryArbitrary: fc.Arbitrary<Query> = fc.record(
  {
    ids: fc.uniqueArray(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 4 }),
    name: fc.constantFrom('session 1', 'session 2', 'session 30'),
    org: fc.integer({ min: 1, max: 3 }),
    completed: fc.constantFrom<0 | 1>(0, 1),
    after: fc.record({ id: fc.integer({ min: 0, max: 60 }) }),
    limit: fc.integer({ min: 1, max: 20 }),
  },
  { requiredKeys: ['ids', 'org', 'limit'] },
);

describeEachDialect('prepared queries', (dialect) => {
  const fixture = useStorageFixture(dialect);
  let storage: Storage;

  beforeAll(async () => {
    storage = fixture.storage;
    await storage.db.insertInto('orgs').values([{ id: 2, created_at: '2026-01-01T00:00:00.000Z' }, { id: 3, created_at: '2026-01-01T00:00:00.000Z' }]).execute();
    const rows = Array.from({ length: 60 }, (_, n) => sessionRow(`session ${n % 31}`, fixture.user.id, { org_id: 1 + (n % 3), status: n % 4 === 0 ? 'completed' : 'waiting' }));
    await storage.db.insertInto('sessions').values(rows).execute();
  });

  const builtEachTime = (q: Query) => {
    // Any plugin makes a prepared query build every time (see prepared): the reference.
    const plain = storage.db.withPlugin({ transformQuery: (a) => a.node, transformResult: (a) => Promise.resolve(a.result) });
    return query.compile(plain, q);
  };

  it('reuses a shape with other values, and runs what a query built for them runs', async () => {
    await fc.assert(
      fc.asyncProperty(queryArbitrary, async (q) => {
        query.compile(storage.db, q);
        const again = query.compile(storage.db, q);
        const reference = builtEachTime(q);
        expect(again.reused).toBe(true);
        expect(reference.reused).toBe(false);
        expect(again.query.sql).toBe(reference.query.sql);
        expect(again.query.parameters).toEqual(reference.query.parameters);
        expect(await query.execute(storage.db, q)).toEqual((await storage.db.executeQuery(reference.query)).rows);
      }),
      { numRuns: 60 },
    );
  });

  it('keeps apart what the shape is: optional arguments, list lengths and the other arguments', () => {
    const base: Query = { ids: [1, 2], org: 1, limit: 5 };
    const sqlOf = (q: Query) => query.compile(storage.db, q).query.sql;
    expect(sqlOf({ ...base, completed: 1 })).not.toBe(sqlOf({ ...base, completed: 0 }));
    expect(sqlOf({ ...base, ids: [1, 2, 3] })).not.toBe(sqlOf(base));
    expect(sqlOf({ ...base, name: 'session 1' })).not.toBe(sqlOf(base));
    expect(sqlOf({ ...base, after: { id: 3 } })).not.toBe(sqlOf(base));
    expect(query.compile(storage.db, { ...base, ids: [7, 8], org: 2 }).reused).toBe(true);
  });

  it('keeps no value of the call that built a shape', () => {
    // Five ids: a shape no other test builds.
    query.compile(storage.db, { ids: [41, 42, 43, 44, 45], name: 'first caller', org: 3, limit: 7 });
    const later = query.compile(storage.db, { ids: [51, 52, 53, 54, 55], name: 'later caller', org: 2, limit: 8 });
    expect(later.reused).toBe(true);
    expect(later.query.parameters).toEqual([51, 52, 53, 54, 55, 2, 'later caller', 8]);
    expect(inspect(later.query, { depth: null })).not.toContain('first caller');
  });

  it('never reuses a shape whose builder used a parameter as a value', () => {
    const folded = prepared(['name'], (db: Db, q: { name: string }) =>
      db
        .selectFrom('sessions')
        .select('id')
        .where('name', '=', q.name.toLowerCase()),
    );
    const first = folded.compile(storage.db, { name: 'SESSION 1' });
    const second = folded.compile(storage.db, { name: 'SESSION 2' });
    expect(second.reused).toBe(false);
    expect([first.query.parameters, second.query.parameters]).toEqual([['session 1'], ['session 2']]);
    // A comparison cannot be stopped; the statement built with Slots then differs from the real one.
    const compared = prepared(['org'], (db: Db, q: { org: number }) => db.selectFrom('sessions').select('id').where('org_id', q.org === 1 ? '=' : '>', q.org));
    compared.compile(storage.db, { org: 1 });
    expect(compared.compile(storage.db, { org: 1 })).toMatchObject({ reused: false, query: { parameters: [1] } });
    expect(compared.compile(storage.db, { org: 1 }).query.sql).toMatch(/"org_id" = /);
    const picked = prepared(['org'], (db: Db, q: { org: number }) => db.selectFrom('sessions').select('id').where('org_id', '=', q.org === 1 ? 2 : 3));
    picked.compile(storage.db, { org: 1 });
    expect(picked.compile(storage.db, { org: 1 })).toMatchObject({ reused: false, query: { parameters: [2] } });
    const joined = prepared(['name'], (db: Db, q: { name: string }) => db.selectFrom('sessions').select('id').where('name', '=', `${q.name}!`));
    joined.compile(storage.db, { name: 'a' });
    expect(joined.compile(storage.db, { name: 'b' })).toMatchObject({ reused: false, query: { parameters: ['b!'] } });
  });

  it('builds every time for a database with plugins, whose plugins must see each query', async () => {
    const seen: string[] = [];
    const watched = storage.db.withPlugin({
      transformQuery: (a) => {
        seen.push(a.node.kind);
        return a.node;
      },
      transformResult: (a) => Promise.resolve(a.result),
    });
    const q: Query = { ids: [1], org: 1, limit: 3 };
    query.compile(storage.db, q);
    expect(query.compile(watched, q).reused).toBe(false);
    await query.execute(watched, q);
    expect(seen).toContain('SelectQueryNode');
  });

  it('keeps the shapes of each database apart: each dialect compiles its own SQL', () => {
    const other = new Kysely<Database>({
      dialect: {
        createAdapter: () => new PostgresAdapter(),
        createDriver: () => new DummyDriver(),
        createIntrospector: (db) => new PostgresIntrospector(db),
        createQueryCompiler: () => new PostgresQueryCompiler(),
      },
    });
    const q: Query = { ids: [1, 2], org: 1, limit: 3 };
    query.compile(storage.db, q);
    query.compile(other, q);
    const mine = query.compile(storage.db, q);
    const theirs = query.compile(other, q);
    expect([mine.reused, theirs.reused]).toEqual([true, true]);
    expect(theirs.query.sql).toContain('$1');
    expect(mine.query.sql.includes('$1')).toBe(dialect === 'postgres');
  });

  it('answers inside a transaction as outside it', async () => {
    const q: Query = { ids: [3, 4], org: 2, limit: 10 };
    const outside = await query.execute(storage.db, q);
    const inside = await storage.transaction((trx) => query.execute(trx, q));
    expect(inside).toEqual(outside);
    expect(outside.length).toBeGreaterThan(2);
  });
});

// `npm run typecheck` holds these: a parameter path must name a string, a number or a list of them in the arguments.
it('takes as parameters only paths of its arguments: a typo does not compile', () => {
  const build = (db: Db, q: Query) => db.selectFrom('sessions').select('id').where('org_id', '=', q.org).limit(q.limit);
  // @ts-expect-error a typo of 'limit'
  expect(() => prepared(['limt'], build)).not.toThrow();
  // @ts-expect-error a typo inside an optional argument
  expect(() => prepared(['after.ids'], build)).not.toThrow();
  // @ts-expect-error an object is no parameter: its fields are
  expect(() => prepared(['after'], build)).not.toThrow();
  // @ts-expect-error a flag stays in the shape
  expect(() => prepared(['flag'], (db: Db, q: { flag: boolean }) => db.selectFrom('sessions').select('id').where('is_public', '=', q.flag ? 1 : 0))).not.toThrow();
  expect(() => prepared(['after.id', 'ids', 'name'], build)).not.toThrow();
});
