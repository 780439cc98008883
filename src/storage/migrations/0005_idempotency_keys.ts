import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

// Migrations see an untyped database: the typed schema is what they produce.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/**
 * Idempotency keys (contract section 7): the first completed response to a POST, per
 * (user, key), kept 24 h in the database so that every instance replays it. `status` is
 * null while the first request is still running.
 */
export async function up(db: AnyDb, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('user_id', dialect.idType, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('status', 'integer')
    .addColumn('content_type', 'text')
    .addColumn('location', 'text')
    .addColumn('body', 'text')
    .addColumn('claimed_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['user_id', 'key'])
    .execute();
  // The purge takes the oldest expired keys first.
  await db.schema.createIndex('idempotency_keys_expiry_idx').on('idempotency_keys').column('expires_at').execute();
}
