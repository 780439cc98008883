import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect.js';
import { accessTriggers, dropAccessTriggers } from './0026_session_access.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/**
 * What lets a dated page read the reader's own private occurrences in page order (issue 36).
 * Probing them session by session read every occurrence of every personal series in a range
 * (135 rows for a 31-day page) and sorted them; an index of private occurrences by creator
 * stops at the page. session_access copies created_by, in its keys index, so that the
 * session-by-session stream keeps to the sessions others created.
 */
export async function up(db: AnyDb, dialect: Dialect): Promise<void> {
  await db.schema.alterTable('session_access').addColumn('created_by', dialect.idType, (c) => c.notNull().defaultTo(0)).execute();
  await sql`update session_access set created_by = (select s.created_by from sessions s where s.id = session_access.session_id)`.execute(db);
  await db.schema.dropIndex('session_access_keys_idx').execute();
  await db.schema
    .createIndex('session_access_keys_idx')
    .on('session_access')
    .columns(['user_id', 'starts_at', 'session_id', 'org_id', 'is_public', 'type', 'status', 'search_name', 'is_recurring', 'created_by'])
    .execute();
  await db.schema
    .createIndex('session_occurrences_own_private_idx')
    .on('session_occurrences')
    .columns(['created_by', 'starts_at', 'session_id', 'occurrence_date', 'ends_at', 'completed', 'day', 'org_id', 'type'])
    .where(sql.ref('is_public'), '=', 0)
    .execute();
  await dropAccessTriggers(db, dialect);
  await accessTriggers(db, dialect, ['org_id', 'starts_at', 'is_public', 'type', 'status', 'search_name', 'is_recurring', 'created_by']);
  await occurrenceCreatorTrigger(db, dialect);
}

/**
 * An occurrence row's created_by now decides who reads it as their own: it follows the session's,
 * whatever changes that (nothing in the service does; a statement run by hand might), so that
 * the own stream and session_access's copy never disagree about a session.
 */
async function occurrenceCreatorTrigger(db: AnyDb, dialect: Dialect): Promise<void> {
  const follow = 'update session_occurrences set created_by = new.created_by where session_id = new.id;';
  if (dialect.name === 'postgres') {
    await sql.raw(`create function focus_session_occurrences_creator() returns trigger language plpgsql as $$ begin ${follow} return null; end $$`).execute(db);
    await sql.raw(`
      create trigger sessions_occurrences_creator after update of created_by on sessions for each row
      when (old.created_by is distinct from new.created_by) execute function focus_session_occurrences_creator()`).execute(db);
    return;
  }
  await sql.raw(`create trigger sessions_occurrences_creator after update of created_by on sessions when old.created_by is not new.created_by begin ${follow} end`).execute(db);
}
