import type { Kysely } from 'kysely';

/**
 * Listings decide which sessions qualify from an index alone and read the table only for
 * the page they return (bench, docs/performance.md). Each index replaces a narrower one
 * with the same leading columns:
 * - undated listings walk one org in (starts_at, id) order, testing visibility
 *   (is_public, created_by) and the keyword (name) on the way;
 * - dated listings take one-off sessions by (org_id, is_recurring, schedule) and series by
 *   (org_id, is_recurring), testing visibility and the series' bounds on the way.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('sessions_org_listing_idx')
    .on('sessions')
    .columns(['org_id', 'starts_at', 'id', 'is_public', 'created_by', 'name'])
    .execute();
  await db.schema.dropIndex('sessions_org_starts_idx').execute();
  await db.schema
    .createIndex('sessions_org_dated_idx')
    .on('sessions')
    .columns(['org_id', 'is_recurring', 'schedule', 'starts_at', 'is_public', 'created_by', 'recurring_start', 'recurring_ends'])
    .execute();
  await db.schema.dropIndex('sessions_org_schedule_idx').execute();
}
