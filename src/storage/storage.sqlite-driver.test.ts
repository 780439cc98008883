import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openStorage } from './database.js';
import { sqlitePath } from './sqlite.js';
import { useStorageFixture } from '../../test/helpers/harness.js';

/** What the SQLite driver adds to better-sqlite3 and Kysely (src/storage/sqlite.ts). */
describe('SQLite driver', () => {
  const fixture = useStorageFixture('sqlite');

  it('lets pending I/O and timers run before each statement outside a transaction', async () => {
    // better-sqlite3 answers synchronously: without the pause the query below would resolve
    // within the same turn of the event loop, before the immediate callback.
    const order: string[] = [];
    setImmediate(() => order.push('immediate'));
    await fixture.storage.db.selectFrom('users').select('id').execute();
    order.push('query');
    expect(order).toEqual(['immediate', 'query']);
  });

  it('does not pause inside a transaction, which holds the write lock', async () => {
    const order: string[] = [];
    await fixture.storage.transaction(async (trx) => {
      setImmediate(() => order.push('immediate'));
      await trx.selectFrom('users').select('id').execute();
      await trx.selectFrom('orgs').select('id').execute();
      order.push('queries');
    });
    expect(order[0]).toBe('queries');
  });

  it('lets the event loop turn between transactions that waited for the connection', async () => {
    // A release hands the connection to the next waiter at once: without a pause after the
    // lock, ten queued write transactions ran in one turn of the loop (a 300–500 ms stall).
    const order: string[] = [];
    const first = fixture.storage.transaction(async (trx) => {
      await trx.selectFrom('users').select('id').execute();
      setImmediate(() => order.push('immediate'));
      order.push('first done');
    });
    const second = fixture.storage.transaction(async (trx) => {
      order.push('second started');
      await trx.selectFrom('users').select('id').execute();
    });
    await Promise.all([first, second]);
    expect(order).toEqual(['first done', 'immediate', 'second started']);
  });

  it('returns rows as plain objects keyed by column, aliases included, with every value', async () => {
    const rows = await fixture.storage.db
      .selectFrom('users')
      .innerJoin('memberships', 'memberships.user_id', 'users.id')
      .select(['users.id', 'users.handle as who', 'memberships.org_id'])
      .execute();
    expect(rows).toEqual([{ id: fixture.user.id, who: 'ann', org_id: 1 }]);
    expect(Object.getPrototypeOf(rows[0])).toBe(Object.prototype);
  });

  it('reports a data version that moves with every write, committed here or by another connection', async () => {
    const before = fixture.storage.dataVersion();
    expect(fixture.storage.dataVersion()).toBe(before);
    await fixture.storage.db.insertInto('orgs').values({ id: 77, created_at: '2026-01-01T00:00:00.000Z' }).execute();
    const afterOwnWrite = fixture.storage.dataVersion();
    expect(afterOwnWrite).not.toBe(before);
    const other = openStorage({ databaseUrl: fixture.database.url });
    try {
      await other.db.deleteFrom('orgs').where('id', '=', 77).execute();
    } finally {
      await other.close();
    }
    expect(fixture.storage.dataVersion()).not.toBe(afterOwnWrite);
  });

  it('waits for another connection\'s write lock without blocking the event loop', async () => {
    const { storage } = fixture;
    const holder = new BetterSqlite3(sqlitePath(fixture.database.url));
    holder.exec('begin immediate');
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    try {
      const write = storage.transaction((trx) => trx.insertInto('orgs').values({ id: 78, created_at: '2026-01-01T00:00:00.000Z' }).execute());
      await new Promise((r) => setTimeout(r, 300));
      // The timer kept running while the write waited: nothing waited synchronously.
      expect(ticks).toBeGreaterThan(10);
      holder.exec('commit');
      await write;
      expect(await storage.db.selectFrom('orgs').select('id').where('id', '=', 78).executeTakeFirst()).toEqual({ id: 78 });
    } finally {
      clearInterval(ticker);
      if (holder.inTransaction) holder.exec('rollback');
      holder.close();
    }
  });
});
