import type { Kysely } from 'kysely';

/**
 * The undated listing indexes of 0004 carry the folded name (`search_name`) too, as 0003's
 * index carried `name`: a keyword common enough to skip the substring index is tested on
 * the index entries a page walks, not by reading each entry's table row (docs/performance.md,
 * "Keyword pages from the index"). Each new index is built before the one it replaces is
 * dropped, so listings on other instances always have one.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const replace = async (old: string, name: string, columns: string[]) => {
    await db.schema.createIndex(name).on('sessions').columns([...columns, 'search_name']).execute();
    await db.schema.dropIndex(old).execute();
  };
  await replace('sessions_public_idx', 'sessions_public_listing_idx', ['org_id', 'is_public', 'starts_at', 'id', 'status', 'type', 'created_by']);
  await replace('sessions_creator_listing_idx', 'sessions_own_listing_idx', ['created_by', 'org_id', 'starts_at', 'id', 'status', 'type', 'is_public']);
}
