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
}
