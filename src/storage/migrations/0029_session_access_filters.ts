import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect.js';
import { accessTriggers, dropAccessTriggers } from './0026_session_access.js';

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
  await dropAccessTriggers(db, dialect);
  await accessTriggers(db, dialect, ['org_id', 'starts_at', 'is_public', 'type', 'status', 'search_name']);
}
