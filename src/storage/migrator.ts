import { type Kysely, type Migration, type MigrationResultSet, Migrator } from 'kysely';
import type { Dialect } from './dialect.js';
import * as initial from './migrations/0001_initial.js';
import * as sessionNameSearch from './migrations/0002_session_name_search.js';
import * as sessionListingIndex from './migrations/0003_session_listing_index.js';
import * as occurrenceIndex from './migrations/0004_occurrence_index.js';
import * as idempotencyKeys from './migrations/0005_idempotency_keys.js';
import * as userTimezone from './migrations/0006_user_timezone.js';
import * as stringSourceId from './migrations/0007_string_source_id.js';
import * as changeLog from './migrations/0008_change_log.js';
import * as calendarFeeds from './migrations/0009_calendar_feeds.js';
import * as webhooks from './migrations/0010_webhooks.js';
import * as listingIndexNames from './migrations/0011_listing_index_names.js';
import * as indexFloor from './migrations/0012_index_floor.js';
import * as changeParticipation from './migrations/0013_change_participation.js';
import * as webhookPayloads from './migrations/0014_webhook_payloads.js';
import * as userDisabled from './migrations/0016_user_disabled.js';
import * as accounts from './migrations/0017_accounts.js';
import * as deviceCodes from './migrations/0018_device_codes.js';
import * as taskCompletedAt from './migrations/0020_task_completed_at.js';
import * as webhookManagement from './migrations/0021_webhook_management.js';
import * as sessionOverrides from './migrations/0022_session_overrides.js';
import * as reminders from './migrations/0023_reminders.js';
import * as oidcLogins from './migrations/0024_oidc_logins.js';
import * as movedOccurrences from './migrations/0025_moved_occurrences_indexed.js';
import * as sessionAccess from './migrations/0026_session_access.js';
import * as sessionRowVersion from './migrations/0027_session_row_version.js';
import * as publicKeysIndex from './migrations/0028_public_keys_index.js';
import * as sessionAccessFilters from './migrations/0029_session_access_filters.js';
import * as datedPageProbes from './migrations/0030_dated_page_probes.js';
import * as ownPrivateOccurrences from './migrations/0031_own_private_occurrences.js';
import * as publicFilteredKeys from './migrations/0032_public_filtered_keys.js';
import * as sessionReadFlags from './migrations/0033_session_read_flags.js';
import * as sqlitePublicFilteredKeys from './migrations/0034_sqlite_public_filtered_keys.js';
import * as webhookTimeListeners from './migrations/0035_webhook_time_listeners.js';
import type { Database } from './tables.js';

/** Migrations in order; names are permanent once released. Each only adds (0003, 0004, 0011, 0029, 0030 and 0031 replace indexes with wider ones; 0007 turns `tasks.source_id` into text, keeping every value; 0014 rebuilds the webhook outbox around shared payloads). */
function migrations(dialect: Dialect): Record<string, Migration> {
  return {
    '0001_initial': { up: (db) => initial.up(db, dialect) },
    '0002_session_name_search': { up: (db) => sessionNameSearch.up(db, dialect) },
    '0003_session_listing_index': { up: (db) => sessionListingIndex.up(db) },
    '0004_occurrence_index': { up: (db) => occurrenceIndex.up(db, dialect) },
    '0005_idempotency_keys': { up: (db) => idempotencyKeys.up(db, dialect) },
    '0006_user_timezone': { up: (db) => userTimezone.up(db) },
    '0007_string_source_id': { up: (db) => stringSourceId.up(db) },
    '0008_change_log': { up: (db) => changeLog.up(db, dialect) },
    '0009_calendar_feeds': { up: (db) => calendarFeeds.up(db, dialect) },
    '0010_webhooks': { up: (db) => webhooks.up(db, dialect) },
    '0011_listing_index_names': { up: (db) => listingIndexNames.up(db) },
    '0012_index_floor': { up: (db) => indexFloor.up(db) },
    '0013_change_participation': { up: (db) => changeParticipation.up(db) },
    '0014_webhook_payloads': { up: (db) => webhookPayloads.up(db, dialect) },
    '0016_user_disabled': { up: (db) => userDisabled.up(db) },
    '0017_accounts': { up: (db) => accounts.up(db, dialect) },
    '0018_device_codes': { up: (db) => deviceCodes.up(db, dialect) },
    '0020_task_completed_at': { up: (db) => taskCompletedAt.up(db) },
    '0021_webhook_management': { up: (db) => webhookManagement.up(db) },
    '0022_session_overrides': { up: (db) => sessionOverrides.up(db, dialect) },
    '0023_reminders': { up: (db) => reminders.up(db) },
    '0024_oidc_logins': { up: (db) => oidcLogins.up(db) },
    '0025_moved_occurrences_indexed': { up: (db) => movedOccurrences.up(db) },
    '0026_session_access': { up: (db) => sessionAccess.up(db, dialect) },
    '0027_session_row_version': { up: (db) => sessionRowVersion.up(db, dialect) },
    '0028_public_keys_index': { up: (db) => publicKeysIndex.up(db) },
    '0029_session_access_filters': { up: (db) => sessionAccessFilters.up(db, dialect) },
    '0030_dated_page_probes': { up: (db) => datedPageProbes.up(db, dialect) },
    '0031_own_private_occurrences': { up: (db) => ownPrivateOccurrences.up(db, dialect) },
    '0032_public_filtered_keys': { up: (db) => publicFilteredKeys.up(db, dialect) },
    '0033_session_read_flags': { up: (db) => sessionReadFlags.up(db, dialect) },
    '0034_sqlite_public_filtered_keys': { up: (db) => sqlitePublicFilteredKeys.up(db, dialect) },
    '0035_webhook_time_listeners': { up: (db) => webhookTimeListeners.up(db) },
  };
}

export class MigrationError extends Error {
  override name = 'MigrationError';
}

/**
 * Kysely's introspection reads every schema of the database by name; a schema dropped or
 * migrated by someone else meanwhile fails that read though nothing of ours is wrong: SQLSTATE
 * 3F000 naming another schema, 42P01 naming a table of another schema (the schema went between
 * listing its tables and reading one), or 42703 from pg_get_serial_sequence (a column listed, then
 * gone: the message names no schema, but ours changes only under the migration lock we hold).
 * Nothing was applied then (PostgreSQL migrates in one transaction), so the run can be repeated.
 */
export function otherSchemaVanished(error: unknown, ours: string | undefined): boolean {
  if (!(error instanceof Error)) return false;
  const { code, routine } = error as Error & { code?: string; routine?: string };
  if (code === '3F000') return ours === undefined || !error.message.includes(`"${ours}"`);
  if (code === '42703') return routine === 'pg_get_serial_sequence';
  if (code !== '42P01') return false;
  const schema = /relation "([^".]+)\.[^"]+" does not exist/.exec(error.message)?.[1];
  return schema !== undefined && schema !== ours;
}

/**
 * Applies every pending migration (or those up to `upTo`, by name); safe to run from many
 * instances at once (see Dialect.withMigrationLock).
 */
export async function runMigrations(database: Kysely<Database>, dialect: Dialect, upTo?: string): Promise<string[]> {
  const result: MigrationResultSet = await dialect.withMigrationLock(database, async (db, schema) => {
    const migrator = new Migrator({
      db,
      provider: { getMigrations: () => Promise.resolve(migrations(dialect)) },
      // Numbers are handed out to work done in parallel, so a migration may be merged after a
      // later-numbered one was applied somewhere (0008 before 0007). Each stands on its own:
      // a pending one runs whatever its number, instead of the start failing.
      allowUnorderedMigrations: true,
      // Kysely looks for its bookkeeping tables in every schema unless told which one: with
      // another schema of the same database already migrated, it would skip creating its own.
      ...(schema === undefined ? {} : { migrationTableSchema: schema }),
    });
    for (let attempt = 1; ; attempt++) {
      const outcome = await (upTo === undefined ? migrator.migrateToLatest() : migrator.migrateTo(upTo));
      if (attempt >= 3 || !otherSchemaVanished(outcome.error, schema)) return outcome;
    }
  });
  if (result.error !== undefined) {
    const failed = result.results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    const reason = result.error instanceof Error ? result.error.message : JSON.stringify(result.error);
    throw new MigrationError(`migration ${failed} failed: ${reason}`, { cause: result.error });
  }
  return (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
