import type { Kysely } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/**
 * Single sign-on attempts in flight (contract section 12): what the callback needs to check
 * the provider's answer (PKCE verifier, nonce) and the invitation it carries, keyed by the
 * SHA-256 of the state. Every instance sees them; each is used once and lives 10 minutes.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('oidc_logins')
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    .addColumn('code_verifier', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('invite_hash', 'text')
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('oidc_logins_expires_idx').on('oidc_logins').column('expires_at').execute();
}
