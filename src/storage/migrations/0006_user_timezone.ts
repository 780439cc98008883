import type { Kysely } from 'kysely';

/**
 * A home time zone per user (contract section 6): the zone a session takes when it is
 * created without one. Every user there already is keeps UTC, the zone their sessions
 * were placed in until now; the constant default makes this a change of the table's
 * definition only on both databases, however many users there are.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').addColumn('timezone', 'text', (c) => c.notNull().defaultTo('UTC')).execute();
}
