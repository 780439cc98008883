import { type Kysely, sql } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/**
 * The occurrence index now holds every occurrence an override moved to another day, even
 * when its original date lies outside the indexed span. Series with overrides are handed
 * back to the background indexer, which rebuilds them that way; until then reads expand
 * them per request, moved occurrences included. Statistics find the participation in
 * occurrences moved into a range through a partial index of the moved ones by day.
 */
export async function up(db: AnyDb): Promise<void> {
  await db
    .updateTable('sessions')
    .set({ indexed_through: null })
    .where('id', 'in', db.selectFrom('session_overrides').select('session_id'))
    .execute();
  await db.schema.createIndex('session_occurrences_moved_idx').on('session_occurrences').columns(['day', 'occurrence_date', 'session_id']).where(sql.ref('day'), '<>', sql.ref('occurrence_date')).execute();
}
