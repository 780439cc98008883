import { type Migration, type MigrationResultSet, Migrator } from 'kysely';
import type { Storage } from './database.js';
import * as initial from './migrations/0001_initial.js';

/** Migrations in order; names are permanent once released. Each only adds. */
function migrations(storage: Storage): Record<string, Migration> {
  return {
    '0001_initial': { up: (db) => initial.up(db, storage.dialect) },
  };
}

export class MigrationError extends Error {
  override name = 'MigrationError';
}

/** Applies every pending migration; safe to run from many instances at once (Kysely takes a lock). */
export async function migrateToLatest(storage: Storage): Promise<string[]> {
  const migrator = new Migrator({
    db: storage.db,
    provider: { getMigrations: () => Promise.resolve(migrations(storage)) },
  });
  const result: MigrationResultSet = await migrator.migrateToLatest();
  if (result.error !== undefined) {
    const failed = result.results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new MigrationError(`migration ${failed} failed: ${String(result.error)}`, { cause: result.error });
  }
  return (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
