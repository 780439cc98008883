import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

// Migrations see an untyped database: the typed schema is what they produce.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/**
 * People and apps (contract section 12): a membership's role, a user's password hash
 * (argon2id, null: no password sign-in) and the email single sign-on matches, what kind of
 * credential a token is (a CLI token, a personal token, an app's, a browser session) with
 * its scopes (JSON, null: all rights) and app name, and one-time invitations (only the hash
 * of an invitation's secret is kept). Columns with defaults only: existing rows stay valid.
 */
export async function up(db: AnyDb, dialect: Dialect): Promise<void> {
  await db.schema.alterTable('memberships').addColumn('role', 'text', (c) => c.notNull().defaultTo('member')).execute();
  await db.schema.alterTable('users').addColumn('password_hash', 'text').execute();
  await db.schema.alterTable('users').addColumn('email', 'text').execute();
  await db.schema.alterTable('tokens').addColumn('kind', 'text', (c) => c.notNull().defaultTo('cli')).execute();
  await db.schema.alterTable('tokens').addColumn('scopes', 'text').execute();
  await db.schema.alterTable('tokens').addColumn('client', 'text').execute();
  await db.schema.createIndex('tokens_user_kind_idx').on('tokens').columns(['user_id', 'kind', 'id']).execute();
  await db.schema.createIndex('users_email_idx').on('users').column('email').unique().execute();
  await db.schema
    .createTable('invites')
    .addColumn('id', dialect.idType, dialect.idColumn)
    .addColumn('org_id', 'integer', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('created_by', dialect.idType, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('used_at', 'text')
    .addColumn('used_by', dialect.idType, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('revoked_at', 'text')
    .execute();
  await db.schema.createIndex('invites_secret_hash_idx').on('invites').column('secret_hash').unique().execute();
  await db.schema.createIndex('invites_org_idx').on('invites').columns(['org_id', 'id']).execute();
}
