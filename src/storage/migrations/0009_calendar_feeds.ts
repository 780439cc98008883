import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect.js';

// Migrations see an untyped database: the typed schema is what they produce.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/**
 * Calendar feeds (contract section 8): a user's secret `/ical/<secret>.ics` URLs. Only the
 * SHA-256 of a secret is kept, unique, so that a feed is found by the hash of the path it
 * is asked for; revoking deletes the row. Sessions get `sequence`, the iCalendar SEQUENCE
 * of a session: 0 when created, one more with every change that moves `updated_at`.
 */
export async function up(db: AnyDb, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('calendar_feeds')
    .addColumn('id', dialect.idType, dialect.idColumn)
    .addColumn('user_id', dialect.idType, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('calendar_feeds_secret_hash_idx').on('calendar_feeds').column('secret_hash').unique().execute();
  await db.schema.createIndex('calendar_feeds_user_idx').on('calendar_feeds').columns(['user_id', 'id']).execute();
  await db.schema.alterTable('sessions').addColumn('sequence', 'integer', (c) => c.notNull().defaultTo(sql`0`)).execute();
}
