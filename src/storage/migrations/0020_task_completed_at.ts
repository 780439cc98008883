import { type Kysely, sql } from 'kysely';

/**
 * Focus statistics (contract section 11) count a task in the bucket of its completion:
 * `tasks.completed_at`, set when a task becomes completed and cleared when it is reopened.
 * A task completed before this migration takes its `updated_at`, the best instant there is.
 * Two indexes bound the statistics' reads: one user's task completions by instant, and one
 * user's participation by occurrence day.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('completed_at', 'text').execute();
  await sql`update tasks set completed_at = updated_at where is_completed = 1`.execute(db);
  await db.schema.createIndex('tasks_completed_idx').on('tasks').columns(['owner_id', 'completed_at']).where('completed_at', 'is not', null).execute();
  // Covering: a streak reads every completed row of the user (3,650 for ten years of daily sessions) from the index alone.
  await db.schema
    .createIndex('session_participants_user_date_idx')
    .on('session_participants')
    .columns(['user_id', 'occurrence_date', 'session_id', 'completed_at'])
    .execute();
}
