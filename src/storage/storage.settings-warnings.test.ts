import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { openStorage } from './database.js';
import { describeEachDialect, useTestDatabase } from '../../test/helpers/harness.js';

describeEachDialect('start-up warnings about database settings', (dialect) => {
  const database = useTestDatabase(dialect);

  it('says nothing about a durable, well-sized setup', async () => {
    const storage = openStorage({ databaseUrl: database.url });
    try {
      // The test server keeps fsync, full_page_writes and synchronous_commit on; some test
      // servers run without autovacuum, which is warned about (the test below).
      expect((await storage.settingsWarnings()).filter((w) => !/autovacuum=off/.test(w))).toEqual([]);
    } finally {
      await storage.close();
    }
  });

  if (dialect === 'postgres') {
    it('warns exactly when autovacuum is off', async () => {
      const storage = openStorage({ databaseUrl: database.url });
      try {
        const { rows } = await sql<{ on: string }>`select setting as on from pg_settings where name = 'autovacuum'`.execute(storage.db);
        const warned = (await storage.settingsWarnings()).some((w) => /autovacuum=off: dead rows and stale statistics/.test(w));
        expect(warned).toBe(rows[0]?.on === 'off');
      } finally {
        await storage.close();
      }
    });

    it('warns when the pool and the listening connection need more connections than PostgreSQL allows', async () => {
      const probe = openStorage({ databaseUrl: database.url });
      const { rows } = await sql<{ n: number }>`
        select (select setting::int from pg_settings where name = 'max_connections')
             - (select setting::int from pg_settings where name = 'superuser_reserved_connections') as n`.execute(probe.db);
      await probe.close();
      const usable = Number(rows[0]?.n);
      const warned = async (poolSize: number) => {
        const storage = openStorage({ databaseUrl: database.url, poolSize });
        try {
          return (await storage.settingsWarnings()).some((w) => w.startsWith(`DB_POOL_SIZE=${poolSize} and the one listening connection exceed`));
        } finally {
          await storage.close();
        }
      };
      expect(await warned(100_000)).toBe(true);
      // A pool of all usable connections leaves none for the listener.
      expect(await warned(usable)).toBe(true);
      expect(await warned(usable - 1)).toBe(false);
    });
  } else {
    it('warns that an in-memory database loses everything at exit', async () => {
      const storage = openStorage({ databaseUrl: 'sqlite::memory:' });
      try {
        expect((await storage.settingsWarnings()).join('\n')).toMatch(/in memory/);
      } finally {
        await storage.close();
      }
    });
  }
});
