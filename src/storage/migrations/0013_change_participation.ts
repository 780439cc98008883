import type { Kysely } from 'kysely';

/**
 * changes.participation and changes.occurrence_date: what a participation change was
 * (join, leave, complete) and of which occurrence, written with the change, since the
 * `session.participation` webhook is built later (webhooks.fanout.ts), when the
 * participation rows may have changed again. Nullable: other changes have neither, and a
 * participation change logged before this migration is sent without them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // One column per statement: SQLite adds one at a time.
  await db.schema.alterTable('changes').addColumn('participation', 'text').execute();
  await db.schema.alterTable('changes').addColumn('occurrence_date', 'text').execute();
}
