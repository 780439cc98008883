import type { Kysely } from 'kysely';

/**
 * The index an org's public sessions are listed from also carries what a page reads beside
 * each key (is_recurring, row_version; created_by it had): the keys statement hands them on
 * from the index entries instead of looking each row up by id (issue 36). Built before the
 * one it replaces is dropped, so listings on other instances always have one.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('sessions_public_keys_idx')
    .on('sessions')
    .columns(['org_id', 'is_public', 'starts_at', 'id', 'status', 'type', 'created_by', 'search_name', 'is_recurring', 'row_version'])
    .execute();
  await db.schema.dropIndex('sessions_public_listing_idx').execute();
}
