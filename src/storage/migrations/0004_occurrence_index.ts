import { type Kysely, sql } from 'kysely';
import { foldForSearch } from '../columns.js';
import type { Dialect } from '../dialect.js';

// Migrations see an untyped database: the typed schema is what they produce.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

const BATCH = 5_000;
/** Rows one folding statement updates (three parameters each: 1,500 per statement, within every engine's limit). */
const FOLD_ROWS = 500;

/**
 * The sessions read side (docs/architecture.md, "Sessions read side"):
 *
 * - session_occurrences, the occurrence index: one row per occurrence of every session,
 *   with what a dated listing filters and orders on, so a page reads about the rows it
 *   shows. Sessions stored before it existed have indexed_through = null and are indexed
 *   by the sessions feature when the service starts (until then listings expand them).
 * - sessions.rrule, kept with every change, and sessions.search_name, the name folded for
 *   keyword search, with a substring index: an FTS5 trigram table on SQLite, pg_trgm on
 *   PostgreSQL (replacing 0002's index on name).
 * - Listing indexes that follow visibility: an org's public sessions, and a creator's own,
 *   each in listing order, so what other members keep private costs a reader nothing.
 */
export async function up(db: AnyDb, dialect: Dialect): Promise<void> {
  const id = dialect.idType;
  await db.schema.alterTable('sessions').addColumn('rrule', 'text').execute();
  await db.schema.alterTable('sessions').addColumn('search_name', 'text', (c) => c.notNull().defaultTo('')).execute();
  await db.schema.alterTable('sessions').addColumn('indexed_through', 'text').execute();
  await foldExistingNames(db);

  let occurrences = db.schema
    .createTable('session_occurrences')
    .addColumn('session_id', id, (c) => c.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('occurrence_date', 'text', (c) => c.notNull())
    .addColumn('org_id', 'bigint', (c) => c.notNull())
    .addColumn('created_by', id, (c) => c.notNull())
    .addColumn('is_public', 'integer', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('completed', 'integer', (c) => c.notNull())
    .addColumn('starts_at', 'text', (c) => c.notNull())
    .addColumn('ends_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('session_occurrences_pk', ['session_id', 'occurrence_date']);
  // The primary key is the only way rows are found by session: no separate rowid b-tree.
  if (dialect.name === 'sqlite') occurrences = occurrences.modifyEnd(sql`without rowid`);
  await occurrences.execute();
  // A dated listing reads an org's public occurrences in listing order from here; the
  // reader's own and involved sessions' occurrences come through the primary key. Private
  // occurrences are not in it: every index row costs a write, and nobody but their own
  // sessions' people lists them.
  const occurrenceColumns = ['starts_at', 'session_id', 'occurrence_date', 'ends_at', 'type', 'completed'];
  await db.schema
    .createIndex('session_occurrences_public_idx')
    .on('session_occurrences')
    .columns(['org_id', ...occurrenceColumns])
    .where(sql.ref('is_public'), '=', 1)
    .execute();
  // completed=1 listings jump straight to completed occurrences, however many others an org holds.
  await db.schema
    .createIndex('session_occurrences_completed_idx')
    .on('session_occurrences')
    .columns(['org_id', 'is_public', ...occurrenceColumns])
    .where(sql.ref('completed'), '=', 1)
    .execute();
  // Time-triggered events (starting, started, ended) look occurrences up by instant.
  await db.schema.createIndex('session_occurrences_starts_idx').on('session_occurrences').column('starts_at').execute();

  // Undated listings: an org's public sessions and a creator's own, in listing order.
  await db.schema
    .createIndex('sessions_public_idx')
    .on('sessions')
    .columns(['org_id', 'is_public', 'starts_at', 'id', 'status', 'type', 'created_by'])
    .execute();
  await db.schema
    .createIndex('sessions_creator_listing_idx')
    .on('sessions')
    .columns(['created_by', 'org_id', 'starts_at', 'id', 'status', 'type', 'is_public'])
    .execute();
  await db.schema.dropIndex('sessions_creator_idx').execute();
  await db.schema.dropIndex('sessions_org_listing_idx').execute();
  // Sessions whose occurrences are not (all) in the index yet: expanded per listing until they are.
  await db.schema.createIndex('sessions_unindexed_idx').on('sessions').columns(['org_id', 'indexed_through']).execute();
  await db.schema.dropIndex('sessions_org_dated_idx').execute();
  await db.schema.createIndex('session_participants_session_user_idx').on('session_participants').columns(['session_id', 'user_id']).execute();

  await createNameIndex(db, dialect);
}

async function foldExistingNames(db: AnyDb): Promise<void> {
  for (let after = 0; ; ) {
    const rows = (await db.selectFrom('sessions').select(['id', 'name']).where('id', '>', after).orderBy('id').limit(BATCH).execute()) as {
      id: number;
      name: string;
    }[];
    // One statement per FOLD_ROWS rows: a statement per row took most of this migration.
    for (let i = 0; i < rows.length; i += FOLD_ROWS) {
      const chunk = rows.slice(i, i + FOLD_ROWS);
      await db
        .updateTable('sessions')
        .set({
          search_name: sql`case ${sql.ref('id')} ${sql.join(
            chunk.map((row) => sql`when ${row.id} then ${foldForSearch(row.name)}`),
            sql` `,
          )} else ${sql.ref('search_name')} end`,
        })
        .where('id', 'in', chunk.map((row) => row.id))
        .execute();
    }
    const last = rows.at(-1);
    if (last === undefined) return;
    after = last.id;
  }
}

async function createNameIndex(db: AnyDb, dialect: Dialect): Promise<void> {
  if (dialect.name === 'postgres') {
    await sql`drop index if exists sessions_name_search_idx`.execute(db);
    await dialect.createSubstringIndex(db, 'sessions_search_name_idx', 'sessions', 'search_name');
    return;
  }
  // An external-content FTS5 table over sessions.search_name, kept by triggers. The text is
  // folded already, so the trigram tokenizer compares it as it is (case_sensitive 1).
  await sql`create virtual table sessions_search using fts5(search_name, content='sessions', content_rowid='id', tokenize='trigram case_sensitive 1')`.execute(db);
  await sql`create trigger sessions_search_insert after insert on sessions begin
    insert into sessions_search(rowid, search_name) values (new.id, new.search_name); end`.execute(db);
  await sql`create trigger sessions_search_delete after delete on sessions begin
    insert into sessions_search(sessions_search, rowid, search_name) values ('delete', old.id, old.search_name); end`.execute(db);
  await sql`create trigger sessions_search_update after update of search_name on sessions begin
    insert into sessions_search(sessions_search, rowid, search_name) values ('delete', old.id, old.search_name);
    insert into sessions_search(rowid, search_name) values (new.id, new.search_name); end`.execute(db);
  await sql`insert into sessions_search(sessions_search) values ('rebuild')`.execute(db);
}
