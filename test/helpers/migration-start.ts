import { expect } from 'vitest';
import type { Storage } from '../../src/storage/database.js';

/** When a migration test's rows were made. */
export const MIGRATION_TEST_NOW = '2026-01-01T00:00:00.000Z';

/**
 * Where a migration test starts: the storage migrated up to `version` (failing unless that is
 * the last migration applied), org 1, and a user per handle, inserted in order; their ids in that order.
 */
export async function migratedWithUsers(storage: Storage, version: string, handles: readonly string[]): Promise<number[]> {
  expect((await storage.migrate(version)).at(-1)).toBe(version);
  const { db } = storage;
  await db.insertInto('orgs').values({ id: 1, created_at: MIGRATION_TEST_NOW }).execute();
  const ids: number[] = [];
  for (const handle of handles) ids.push((await db.insertInto('users').values({ handle, created_at: MIGRATION_TEST_NOW }).returning('id').executeTakeFirstOrThrow()).id);
  return ids;
}
