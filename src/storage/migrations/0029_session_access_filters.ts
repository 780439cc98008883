import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect.js';
import { accessTriggers } from './0026_session_access.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/**
 * session_access also copies the session's type, status and folded name, and its listing
 * index carries them: a personal stream with a type, completion or keyword filter tests them
 * on index entries instead of reading each of the reader's sessions by key (issue 36). The
 * triggers of 0026 are built again with the longer list; the new index before the old one goes.
 */
export async function up(db: AnyDb, dialect: Dialect): Promise<void> {
  for (const [column, fallback] of [['type', 'standard'], ['status', ''], ['search_name', '']] as const) {
    await db.schema.alterTable('session_access').addColumn(column, 'text', (c) => c.notNull().defaultTo(fallback)).execute();
  }
  await sql`
    update session_access set
      type = (select s.type from sessions s where s.id = session_access.session_id),
      status = (select s.status from sessions s where s.id = session_access.session_id),
      search_name = (select s.search_name from sessions s where s.id = session_access.session_id)`.execute(db);
  await db.schema
    .createIndex('session_access_keys_idx')
    .on('session_access')
    .columns(['user_id', 'starts_at', 'session_id', 'org_id', 'is_public', 'type', 'status', 'search_name'])
    .execute();
  await db.schema.dropIndex('session_access_listing_idx').execute();
  if (dialect.name === 'postgres') {
    for (const table of ['session_collaborators', 'session_participants']) await sql.raw(`drop trigger ${table}_access on ${table}`).execute(db);
    for (const trigger of ['sessions_access_insert', 'sessions_access_update']) await sql.raw(`drop trigger ${trigger} on sessions`).execute(db);
    await sql`drop function focus_session_access_tie()`.execute(db);
    await sql`drop function focus_session_access_session()`.execute(db);
  } else {
    const triggers = ['sessions_access_insert', 'sessions_access_update', 'sessions_access_creator'];
    for (const table of ['session_collaborators', 'session_participants']) triggers.push(`${table}_access_insert`, `${table}_access_delete`, `${table}_access_update`);
    for (const trigger of triggers) await sql.raw(`drop trigger ${trigger}`).execute(db);
  }
  await accessTriggers(db, dialect, ['org_id', 'starts_at', 'is_public', 'type', 'status', 'search_name']);
}
