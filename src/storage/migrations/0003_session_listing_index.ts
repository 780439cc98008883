import type { Kysely } from 'kysely';

/**
 * Listings walk one org's sessions in (starts_at, id) order. With the columns the
 * visibility rule and the keyword test read also in the index, SQLite decides which rows
 * qualify from the index alone and reads the table only for the page it returns
 * (bench, docs/performance.md). It replaces the (org_id, starts_at, id) index it extends.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('sessions_org_listing_idx')
    .on('sessions')
    .columns(['org_id', 'starts_at', 'id', 'is_public', 'created_by', 'name'])
    .execute();
  await db.schema.dropIndex('sessions_org_starts_idx').execute();
}
