import { type Kysely, sql } from 'kysely';

/**
 * `source_id` becomes text (contract section 6): an origin's id is a non-negative integer
 * or a string, and its text is the de-duplication key, so `42` and `"42"` name one task.
 * `source_id_type` remembers the JSON type it was last sent with. Every existing id is an
 * integer and is kept as its decimal text. The same statements run on both engines
 * (SQLite cannot change a column's type in place): add, copy, drop, rename, re-index.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tasks').addColumn('source_id_text', 'text').execute();
  await db.schema.alterTable('tasks').addColumn('source_id_type', 'text').execute();
  await sql`update tasks set source_id_text = cast(source_id as text), source_id_type = 'integer' where source_id is not null`.execute(db);
  // A column in an index cannot be dropped; the upsert key is rebuilt on the text below.
  await db.schema.dropIndex('tasks_origin_uq').execute();
  await db.schema.alterTable('tasks').dropColumn('source_id').execute();
  await db.schema.alterTable('tasks').renameColumn('source_id_text', 'source_id').execute();
  // The upsert key of bulk imports; rows without an origin (NULLs) never collide.
  await db.schema.createIndex('tasks_origin_uq').on('tasks').columns(['owner_id', 'source', 'source_id']).unique().execute();
}
