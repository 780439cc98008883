import type { Kysely } from 'kysely';

/**
 * Reminders (contract section 10): each user's home minute offsets before a session starts
 * (JSON array, default `[5]`, the fixed lead of version 2) and a session's own (null: each
 * involved person's home ones). Added columns with constant defaults: a change of the
 * tables' definitions only. The indexes let the clock read the distinct offsets in use
 * without reading every row.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').addColumn('reminders', 'text', (c) => c.notNull().defaultTo('[5]')).execute();
  await db.schema.alterTable('sessions').addColumn('reminders', 'text').execute();
  await db.schema.createIndex('users_reminders_idx').on('users').column('reminders').execute();
  await db.schema.createIndex('sessions_reminders_idx').on('sessions').column('reminders').where('reminders', 'is not', null).execute();
}
