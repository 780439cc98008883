import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDialect, useTestDatabase } from '../../test/helpers/harness.js';
import { type Storage, openStorage } from './database.js';

/** Polls until check() holds, for at most `ms`; returns the time it took. */
async function within(ms: number, check: () => boolean | Promise<boolean>): Promise<number> {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return performance.now() - started;
}

/** Waits until the storage listens on the channel (PostgreSQL confirms LISTEN asynchronously). */
const listening = (storage: Storage, channel: string) => within(5_000, () => storage.signals.version(channel) !== undefined);

describeEachDialect('storage signals', (dialect) => {
  const database = useTestDatabase(dialect);
  // Two opened storages stand for two processes: each has its own connections (and, on PostgreSQL, its own listener).
  let a: Storage;
  let b: Storage;
  const useOther = useOtherStorage(dialect);

  beforeAll(async () => {
    a = openStorage({ databaseUrl: database.url });
    b = openStorage({ databaseUrl: database.url });
    await a.migrate();
  });
  afterAll(async () => {
    await a.close();
    await b.close();
  });

  it("a write and its signal move the channel's version at once in the publishing process, and soon in every other", async () => {
    await Promise.all([listening(a, 'c1'), listening(b, 'c1')]);
    const [beforeA, beforeB] = [a.signals.version('c1'), b.signals.version('c1')];
    await a.transaction(async (trx) => {
      await trx.insertInto('orgs').values({ id: 101, created_at: '2026-01-01T00:00:00.000Z' }).execute();
      await a.signals.publish(trx, 'c1', 'x');
    });
    expect(a.signals.version('c1')).not.toBe(beforeA);
    const took = await within(1_000, () => b.signals.version('c1') !== beforeB);
    expect(took).toBeLessThan(1_000);
  });

  it('delivers the payload to subscribers', async () => {
    const seen: string[] = [];
    const stop = b.signals.subscribe('c2', (payload) => seen.push(payload));
    const own: string[] = [];
    const stopOwn = a.signals.subscribe('c2', (payload) => own.push(payload));
    await Promise.all([listening(a, 'c2'), listening(b, 'c2')]);
    await a.signals.publish(a.db, 'c2', 'token:7');
    // PostgreSQL delivers to every process; SQLite processes cannot signal each other (their version is the file's data version instead).
    await within(1_000, () => own.includes('token:7') && (dialect === 'sqlite' || seen.includes('token:7')));
    stop();
    stopOwn();
  });

  it('a transaction that rolls back signals nothing to other processes', async () => {
    await listening(b, 'c3');
    const before = b.signals.version('c3');
    await expect(
      a.transaction(async (trx) => {
        await a.signals.publish(trx, 'c3', 'never');
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await new Promise((r) => setTimeout(r, 200));
    expect(b.signals.version('c3')).toBe(before);
  });

  it('channels of another database on the same server stay apart', async () => {
    const other = useOther.storage;
    await Promise.all([listening(b, 'c4'), listening(other, 'c4')]);
    const before = b.signals.version('c4');
    await other.signals.publish(other.db, 'c4', 'elsewhere');
    await new Promise((r) => setTimeout(r, 200));
    expect(b.signals.version('c4')).toBe(before);
  });

  it.skipIf(dialect !== 'postgres')('while the listening connection is down nothing may be cached; after reconnecting every version has moved', async () => {
    await listening(b, 'c5');
    const before = b.signals.version('c5');
    // The listener's last statement names its channel, which is unique to this schema: end exactly that backend.
    const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL });
    await admin.connect();
    try {
      const channel = (await admin.query<{ name: string }>(
        `select 'focus_' || left(md5($1 || ':' || 'c5'), 24) as name`,
        [new URL(database.url).searchParams.get('options')?.replace(/^-c search_path=([^,]+),.*$/, '$1')],
      )).rows[0]?.name as string;
      const ended = await admin.query(
        `select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'focus-signals' and query like $1`,
        [`%${channel}%`],
      );
      expect(ended.rowCount).toBeGreaterThan(0);
    } finally {
      await admin.end();
    }
    await within(2_000, () => b.signals.version('c5') === undefined);
    await within(5_000, () => b.signals.version('c5') !== undefined);
    expect(b.signals.version('c5')).not.toBe(before);
    // And it listens again.
    const again = b.signals.version('c5');
    await a.signals.publish(a.db, 'c5');
    await within(1_000, () => b.signals.version('c5') !== again);
  });
});

/** A storage on a second, separate database of the same dialect (another schema on the same PostgreSQL server). */
function useOtherStorage(dialect: Parameters<typeof useTestDatabase>[0]): { storage: Storage } {
  const database = useTestDatabase(dialect);
  const holder = {} as { storage: Storage };
  beforeAll(async () => {
    holder.storage = openStorage({ databaseUrl: database.url });
    await holder.storage.migrate();
  });
  afterAll(() => holder.storage.close());
  return holder;
}
