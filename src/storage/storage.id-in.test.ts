import { beforeAll, expect, it } from 'vitest';
import type { ExpressionBuilder } from 'kysely';
import type { Database } from './tables.js';
import type { Storage } from './database.js';
import { describeEachDialect, useStorageFixture } from '../../test/helpers/harness.js';
import { sessionRow } from '../../test/helpers/session-row.js';

/**
 * storage.idIn: the rows with the given ids, whatever else the statement tests. (Why it is
 * not a plain `in`: PostgreSQL's plan at the bench's scale, in docs/performance.md; a small
 * fixture does not make the planner choose it.)
 */
describeEachDialect('storage.idIn', (dialect) => {
  const fixture = useStorageFixture(dialect);
  let storage: Storage;
  let ids: number[];

  beforeAll(async () => {
    storage = fixture.storage;
    await storage.db.insertInto('orgs').values(Array.from({ length: 13 }, (_, i) => ({ id: i + 2, created_at: '2026-01-01T00:00:00.000Z' }))).execute();
    const rows = Array.from({ length: 2_000 }, (_, n) => sessionRow(`session ${n}`, fixture.user.id, { org_id: 1 + (n % 14) }));
    for (let i = 0; i < rows.length; i += 500) await storage.db.insertInto('sessions').values(rows.slice(i, i + 500)).execute();
    const inOrgs = await storage.db.selectFrom('sessions').select('id').where('org_id', 'in', [1, 2]).orderBy('id').execute();
    ids = inOrgs.filter((_, i) => i % 5 === 0).map((r) => r.id);
  });

  const query = (list: readonly number[]) =>
    storage.db
      .selectFrom('sessions')
      .selectAll()
      .where((eb) => storage.idIn(eb.ref('sessions.id'), list))
      .where('org_id', 'in', [1, 2])
      .orderBy('id');

  it('selects exactly the listed rows that pass the other conditions, once each', async () => {
    expect(ids.length).toBeGreaterThan(50);
    const elsewhere = await storage.db.selectFrom('sessions').select('id').where('org_id', '=', 3).limit(5).execute();
    const asked = [...ids, ...ids.slice(0, 10), ...elsewhere.map((r) => r.id), 999_999];
    expect((await query(asked).execute()).map((r) => r.id)).toEqual(ids);
    expect((await query([ids[7] as number]).execute()).map((r) => r.id)).toEqual([ids[7]]);
  });
});

/** storage.inSubquery: the rows whose key the subquery returns, once each, whatever else the statement tests. */
describeEachDialect('storage.inSubquery', (dialect) => {
  const fixture = useStorageFixture(dialect);

  it('selects exactly the rows the subquery names that pass the other conditions', async () => {
    const { storage } = fixture;
    await storage.db.insertInto('orgs').values({ id: 2, created_at: '2026-01-01T00:00:00.000Z' }).execute();
    const rows = Array.from({ length: 300 }, (_, n) => sessionRow(`session ${n}`, fixture.user.id, { org_id: 1 + (n % 2), is_public: n % 3 === 0 ? 1 : 0 }));
    await storage.db.insertInto('sessions').values(rows).execute();
    const named = (eb: ExpressionBuilder<Database, 'sessions'>) =>
      storage.inSubquery(eb.ref('sessions.id'), eb.selectFrom('sessions as s').select('s.id').where('s.is_public', '=', 1).$asScalar());
    const found = await storage.db.selectFrom('sessions').select('id').where(named).where('org_id', '=', 2).orderBy('id').execute();
    const expected = await storage.db.selectFrom('sessions').select('id').where('is_public', '=', 1).where('org_id', '=', 2).orderBy('id').execute();
    expect(expected.length).toBeGreaterThan(10);
    expect(found).toEqual(expected);
    const none = await storage.db.selectFrom('sessions').select('id').where((eb) => storage.inSubquery(eb.ref('sessions.id'), eb.selectFrom('sessions as s').select('s.id').where('s.org_id', '=', 99).$asScalar())).execute();
    expect(none).toEqual([]);
  });
});
