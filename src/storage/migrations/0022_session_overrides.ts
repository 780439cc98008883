import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect.js';

// Migrations see an untyped database: the typed schema is what they produce.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/**
 * Occurrence overrides (contract section 10, "Editing one occurrence"):
 *
 * - session_overrides: one row per edited occurrence of a series, keyed by its original
 *   date; `fields` holds only what that day sets (JSON of session columns: a set
 *   `website_blocker` may be null, which a nullable column could not tell from "not set").
 * - session_occurrences.day: the local day an occurrence takes place on (an override may
 *   move it); dated listings filter on it. The two covering listing indexes are rebuilt
 *   with it, each new one before the one it replaces is dropped, and reads by session get
 *   an index on (session_id, day).
 * - sessions.split_from: the series a "this and following" edit split this one from.
 */
export async function up(db: AnyDb, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('session_overrides')
    .addColumn('session_id', dialect.idType, (c) => c.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('occurrence_date', 'text', (c) => c.notNull())
    .addColumn('fields', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('session_overrides_pk', ['session_id', 'occurrence_date'])
    .execute();
  await db.schema.alterTable('sessions').addColumn('split_from', 'bigint').execute();
  await db.schema.alterTable('session_occurrences').addColumn('day', 'text', (c) => c.notNull().defaultTo('')).execute();
  await db.updateTable('session_occurrences').set({ day: sql.ref('occurrence_date') }).execute();
  const columns = ['starts_at', 'session_id', 'occurrence_date', 'ends_at', 'type', 'completed', 'day'];
  await db.schema.createIndex('session_occurrences_public_day_idx').on('session_occurrences').columns(['org_id', ...columns]).where(sql.ref('is_public'), '=', 1).execute();
  await db.schema.dropIndex('session_occurrences_public_idx').execute();
  await db.schema
    .createIndex('session_occurrences_completed_day_idx')
    .on('session_occurrences')
    .columns(['org_id', 'is_public', ...columns])
    .where(sql.ref('completed'), '=', 1)
    .execute();
  await db.schema.dropIndex('session_occurrences_completed_idx').execute();
  // Reads by session (a reader's own and involved sessions, /me/now) seek a range of days here,
  // as they sought the primary key's occurrence_date before an override could move a day.
  await db.schema.createIndex('session_occurrences_day_idx').on('session_occurrences').columns(['session_id', 'day']).execute();
}
