import type { Kysely } from 'kysely';

/**
 * Off-boarding (contract section 13): `focus users disable` sets `disabled_at`, and while it
 * is set the user's tokens, streams, webhooks and calendar feeds answer nothing. Nullable
 * without a default: a change of the table's definition only, however many users there are.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').addColumn('disabled_at', 'text').execute();
}
