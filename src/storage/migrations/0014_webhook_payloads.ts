import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect.js';

// Migrations see an untyped database: the typed schema is what they produce.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/**
 * One stored payload per event (webhook_payloads), shared by its deliveries: a delivery
 * row keeps only its webhook, payload and attempt state (storage/tables.ts). The outbox is
 * rebuilt (SQLite cannot drop a NOT NULL column in place); each old delivery keeps its id
 * and gets a payload of the same id. The due index is per webhook: the dispatcher picks
 * webhooks fairly and takes each one's oldest due deliveries; the lease is on the webhook
 * (webhooks.claimed_until: one instance sends to it at a time, one attempt at a time), so a
 * delivery row has none (webhooks.claims.ts).
 */
export async function up(db: AnyDb, dialect: Dialect): Promise<void> {
  const id = dialect.idType;
  await db.schema
    .createTable('webhook_payloads')
    .addColumn('id', id, dialect.idColumn)
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('occurred_at', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_payloads_age_idx').on('webhook_payloads').column('created_at').execute();

  await db.schema
    .createTable('webhook_deliveries_next')
    .addColumn('id', id, dialect.idColumn)
    .addColumn('webhook_id', id, (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('payload_id', id, (c) => c.notNull().references('webhook_payloads.id'))
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text')
    .addColumn('last_status', 'integer')
    .addColumn('delivered_at', 'text')
    .addColumn('failed_at', 'text')
    .execute();
  await sql`insert into webhook_payloads (id, type, occurred_at, body, created_at) select id, type, occurred_at, payload, created_at from webhook_deliveries`.execute(db);
  await sql`insert into webhook_deliveries_next (id, webhook_id, payload_id, event_id, attempts, next_attempt_at, last_status, delivered_at, failed_at)
    select id, webhook_id, id, event_id, attempts, next_attempt_at, last_status, delivered_at, failed_at from webhook_deliveries`.execute(db);
  await db.schema.dropTable('webhook_deliveries').execute();
  await db.schema.alterTable('webhook_deliveries_next').renameTo('webhook_deliveries').execute();
  if (dialect.name === 'postgres') {
    // Rows were copied with their ids: the identities continue after them.
    for (const table of ['webhook_payloads', 'webhook_deliveries']) {
      await sql`select setval(pg_get_serial_sequence(${table}, 'id'), coalesce((select max(id) from ${sql.table(table)}), 0) + 1, false)`.execute(db);
    }
  }
  // The listing (latest first per webhook), each webhook's due work (pending rows only), and the payloads still referenced.
  await db.schema.createIndex('webhook_deliveries_webhook_idx').on('webhook_deliveries').columns(['webhook_id', 'id']).execute();
  await db.schema
    .createIndex('webhook_deliveries_due_idx')
    .on('webhook_deliveries')
    .columns(['webhook_id', 'next_attempt_at'])
    .where(sql.ref('next_attempt_at'), 'is not', null)
    .execute();
  await db.schema.alterTable('webhooks').addColumn('claimed_until', 'text').execute();
  await db.schema.createIndex('webhook_deliveries_payload_idx').on('webhook_deliveries').column('payload_id').execute();
}
