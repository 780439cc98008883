import type { Kysely } from 'kysely';

/**
 * sessions.indexed_from: the first local date the occurrence index holds for a series
 * that began long before it was last written (null: from its first occurrence, which
 * every session stored before this migration keeps). A series starting in year 1 would
 * otherwise write one index row per day since then inside the request that saved it.
 * The partial index finds the few such series an old dated listing expands per request.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('indexed_from', 'text').execute();
  await db.schema
    .createIndex('sessions_index_floor_idx')
    .on('sessions')
    .columns(['org_id', 'indexed_from'])
    .where('indexed_from', 'is not', null)
    .execute();
}
