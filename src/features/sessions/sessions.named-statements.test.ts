import { sql } from 'kysely';
import { beforeAll, expect, it } from 'vitest';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { createSessionsService } from './sessions.service.js';
import { type Storage, openStorage } from '../../storage/database.js';
import { describeEachDialect, useStorageFixture } from '../../../test/helpers/harness.js';
import { sessionRow } from '../../../test/helpers/session-row.js';
import { parseSerialized } from '../../../test/helpers/serialized.js';

/**
 * PostgreSQL keeps a listing's statements prepared by name per connection (storage/postgres.named.ts):
 * the second call of a shape runs by name, and a migration that changes a table under a
 * kept statement (another instance upgrading first) does not fail the next call.
 */
describeEachDialect('named statements', (dialect) => {
  const fixture = useStorageFixture(dialect);
  let single: Storage;
  let reader: AuthenticatedUser;

  beforeAll(async () => {
    reader = { ...fixture.user, orgIds: [1] };
    const rows = Array.from({ length: 30 }, (_, n) => sessionRow(`named ${n}`, fixture.user.id, { org_id: 1 }));
    await fixture.storage.db.insertInto('sessions').values(rows).execute();
    // One connection, so that what it keeps prepared can be read on it.
    single = openStorage({ databaseUrl: fixture.database.url, poolSize: 1 });
    return () => single.close();
  });

  const named = async () =>
    (await sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements where name like 'focus\\_%'`.execute(single.db)).rows[0]?.n ?? 0;

  it.skipIf(dialect === 'sqlite')('runs a listing shape by name from its second call, and survives a column added under it', async () => {
    const service = createSessionsService(single);
    const first = parseSerialized(await service.list(reader, { limit: 10 }));
    expect(first.data).toHaveLength(10);
    expect(parseSerialized(await service.list(reader, { limit: 10 }))).toEqual(first);
    const kept = await named();
    expect(kept).toBeGreaterThan(0);
    // `select sessions.*` now returns another column: PostgreSQL refuses the kept statement.
    await sql`alter table sessions add column named_test_extra integer`.execute(fixture.storage.db);
    try {
      const after = parseSerialized(await service.list(reader, { limit: 10 }));
      expect(after.data.map((s) => s.id)).toEqual(first.data.map((s) => s.id));
      expect(parseSerialized(await service.list(reader, { limit: 10 }))).toEqual(after);
    } finally {
      await sql`alter table sessions drop column named_test_extra`.execute(fixture.storage.db);
    }
  });
});
