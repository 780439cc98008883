import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect.js';

// Migrations see an untyped database: the typed schema is what they produce.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/**
 * Webhooks (contract section 9; storage/tables.ts WebhooksTable and the tables after it):
 * the subscriptions, their deliveries (the outbox the dispatcher drains), the fan-out's
 * place in the change log and the clock's last checked instant, and the time-triggered
 * events already enqueued (one row per webhook, occurrence and type, so that every
 * instance may run the clock and each event is still enqueued once).
 */
export async function up(db: AnyDb, dialect: Dialect): Promise<void> {
  const id = dialect.idType;
  await db.schema
    .createTable('webhooks')
    .addColumn('id', id, dialect.idColumn)
    .addColumn('user_id', id, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhooks_user_idx').on('webhooks').columns(['user_id', 'id']).execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', id, dialect.idColumn)
    .addColumn('webhook_id', id, (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('occurred_at', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text')
    .addColumn('claimed_until', 'text')
    .addColumn('last_status', 'integer')
    .addColumn('delivered_at', 'text')
    .addColumn('failed_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  // The listing (latest first per webhook) and the dispatcher's due work (pending rows only).
  await db.schema.createIndex('webhook_deliveries_webhook_idx').on('webhook_deliveries').columns(['webhook_id', 'id']).execute();
  await db.schema
    .createIndex('webhook_deliveries_due_idx')
    .on('webhook_deliveries')
    .column('next_attempt_at')
    .where(sql.ref('next_attempt_at'), 'is not', null)
    .execute();
  await db.schema.createIndex('webhook_deliveries_age_idx').on('webhook_deliveries').column('created_at').execute();

  await db.schema
    .createTable('webhook_state')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('position', 'bigint')
    .addColumn('instant', 'text')
    .execute();
  // The fan-out starts at the change log's head: changes before webhooks existed have no subscriber.
  await sql`insert into webhook_state (name, position, instant) select 'fanout', coalesce(max(position), 0), null from changes`.execute(db);
  await db.insertInto('webhook_state').values({ name: 'clock', position: null, instant: null }).execute();

  await db.schema
    .createTable('webhook_triggers')
    .addColumn('webhook_id', id, (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('session_id', 'bigint', (c) => c.notNull())
    .addColumn('occurrence_date', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('fires_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_triggers_pk', ['webhook_id', 'session_id', 'occurrence_date', 'type'])
    .execute();
  await db.schema.createIndex('webhook_triggers_age_idx').on('webhook_triggers').column('fires_at').execute();
  // The clock finds occurrences ending in its window (session.ended) through this one.
  await db.schema.createIndex('session_occurrences_ends_idx').on('session_occurrences').column('ends_at').execute();
}
