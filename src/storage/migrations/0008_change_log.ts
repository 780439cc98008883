import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect.js';

// Migrations see an untyped database: the typed schema is what they produce.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/**
 * The change log (storage/tables.ts ChangesTable): the change feed, live event streams and
 * webhooks follow it by position (commit order; ChangesRepository.sequence). Readers ask for
 * one org's sessions or one owner's tasks from a position on; the sequencer looks for rows
 * without one; old rows are purged by age.
 */
export async function up(db: AnyDb, dialect: Dialect): Promise<void> {
  const id = dialect.idType;
  await db.schema
    .createTable('changes')
    .addColumn('id', id, dialect.idColumn)
    .addColumn('position', 'bigint')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('record_id', 'bigint', (c) => c.notNull())
    .addColumn('org_id', 'bigint')
    .addColumn('owner_id', id, (c) => c.notNull())
    .addColumn('audience', 'text')
    .addColumn('actor_id', id, (c) => c.notNull())
    .addColumn('changed_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('changes_position_idx').on('changes').column('position').execute();
  await db.schema.createIndex('changes_unpositioned_idx').on('changes').column('id').where(sql.ref('position'), 'is', null).execute();
  await db.schema.createIndex('changes_org_idx').on('changes').columns(['org_id', 'position']).execute();
  await db.schema.createIndex('changes_owner_idx').on('changes').columns(['owner_id', 'kind', 'position']).execute();
  if (dialect.serialWrites) {
    // One writer at a time: ids are in commit order already, so a row's position is its id.
    await sql`create trigger changes_position after insert on changes begin
      update changes set position = new.id where id = new.id; end`.execute(db);
  }
  await db.schema.createIndex('changes_age_idx').on('changes').column('changed_at').execute();
}
