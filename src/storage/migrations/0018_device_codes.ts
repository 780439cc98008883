import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/**
 * OAuth 2.0 device authorization requests (RFC 8628, contract section 12): only hashes of
 * the device code are kept; the user code is short-lived and shown on two screens, so it is
 * stored as typed (unique while it lives). `status`: pending, approved, denied or issued.
 */
export async function up(db: AnyDb, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('device_codes')
    .addColumn('id', dialect.idType, dialect.idColumn)
    .addColumn('device_code_hash', 'text', (c) => c.notNull())
    .addColumn('user_code', 'text', (c) => c.notNull())
    .addColumn('client', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('user_id', dialect.idType, (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('polled_at', 'text')
    .addColumn('interval_s', 'integer', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('device_codes_hash_idx').on('device_codes').column('device_code_hash').unique().execute();
  await db.schema.createIndex('device_codes_user_code_idx').on('device_codes').column('user_code').unique().execute();
}
