import type { Kysely } from 'kysely';

/**
 * Event streams announce `session.ended` as occurrences end: the instances read the
 * occurrences ending since their last look, by `ends_at`, as they read those starting by
 * `starts_at` (0004's index), instead of every occurrence of the last day.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('session_occurrences_ends_idx').on('session_occurrences').column('ends_at').execute();
}
