import { expect, it } from 'vitest';
import { describeEachDialect, useUnmigratedStorage } from '../../test/helpers/harness.js';
import { MIGRATION_TEST_NOW as now, migratedWithUsers } from '../../test/helpers/migration-start.js';
import { sessionRow } from '../../test/helpers/session-row.js';

/*
 * 0006_user_timezone on a database that already has users and sessions: the users keep
 * what they had and are on UTC (where their sessions were placed before there was a home
 * zone); their sessions are untouched.
 */
describeEachDialect('migration 0006_user_timezone', (dialect) => {
  const opened = useUnmigratedStorage(dialect);

  it('leaves existing users on UTC and their sessions where they were', async () => {
    const { storage } = opened;
    const ids = await migratedWithUsers(storage, '0005_idempotency_keys', ['ann', 'ben']);
    const { db } = storage;
    await db
      .insertInto('sessions')
      .values(sessionRow('Old', ids[0] as number, { timezone: 'Europe/Berlin', starts_at: '2026-01-02T08:00:00.000Z', ends_at: '2026-01-02T08:25:00.000Z' }))
      .execute();
    const sessionBefore = await db.selectFrom('sessions').selectAll().executeTakeFirstOrThrow();

    expect(await storage.migrate('0006_user_timezone')).toContain('0006_user_timezone');
    const users = await db.selectFrom('users').select(['id', 'handle', 'created_at', 'timezone']).orderBy('id').execute();
    expect(users).toEqual([
      { id: ids[0], handle: 'ann', created_at: now, timezone: 'UTC' },
      { id: ids[1], handle: 'ben', created_at: now, timezone: 'UTC' },
    ]);
    expect(await db.selectFrom('sessions').selectAll().executeTakeFirstOrThrow()).toEqual(sessionBefore);
    // A user added afterwards without a zone gets the default from the database too.
    await db.insertInto('users').values({ handle: 'cem', created_at: now }).execute();
    expect((await db.selectFrom('users').select('timezone').where('handle', '=', 'cem').executeTakeFirstOrThrow()).timezone).toBe('UTC');
  });
});
