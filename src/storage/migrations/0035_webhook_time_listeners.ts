import { type Kysely, sql } from 'kysely';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/**
 * Whether a webhook subscribes to a time-triggered event, kept as a flag written with its events,
 * and an index of the active ones: the webhook clock asks each second whether any listens, and
 * that was a scan of every webhook's JSON text (~12 ms on the event loop for 25,000 webhooks on
 * SQLite while none listened). Existing rows are set from the event names of this version
 * (webhooks.events.ts TIME_EVENTS); the repository sets the flag on every write since.
 */
export async function up(db: AnyDb): Promise<void> {
  await db.schema.alterTable('webhooks').addColumn('time_events', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  // The index before the rows are set: built after the update, PostgreSQL found its updated rows'
  // chains broken and let only transactions newer than the index use it (indcheckxmin).
  await db.schema.createIndex('webhooks_time_listeners_idx').on('webhooks').column('id').where(sql.ref('active'), '=', 1).where(sql.ref('time_events'), '=', 1).execute();
  await db
    .updateTable('webhooks')
    .set({ time_events: 1 })
    .where((eb) => eb.or(['session.starting', 'session.started', 'session.ended'].map((event) => sql<boolean>`${sql.ref('events')} like ${`%"${event}"%`}`)))
    .execute();
}
