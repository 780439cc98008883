import type { Kysely } from 'kysely';

/**
 * Webhook management (contract section 10): `active` (0 stops delivery, queued ones
 * included) and the secret a rotation replaced, which keeps signing beside the new one
 * until `previous_secret_until`. Added columns only: a change of the table's definition.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhooks').addColumn('active', 'integer', (c) => c.notNull().defaultTo(1)).execute();
  await db.schema.alterTable('webhooks').addColumn('previous_secret', 'text').execute();
  await db.schema.alterTable('webhooks').addColumn('previous_secret_until', 'text').execute();
}
