import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect.js';
import { accessTriggers, dropAccessTriggers } from './0026_session_access.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/**
 * What lets a dated page probe less (issue 36). session_access also copies is_recurring, in its
 * keys index: the page probes the occurrences of the reader's series and of the one-off sessions
 * starting in its range only, instead of every personal session that started before the range
 * ends (a one-off takes place at its session's start: no override moves it). And the sessions
 * never indexed get an index of their own, mostly empty: the page asks whether an org has any
 * (sessions.occurrence-statements.ts), a probe no other index answers as cheaply.
 */
export async function up(db: AnyDb, dialect: Dialect): Promise<void> {
  await db.schema.alterTable('session_access').addColumn('is_recurring', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await sql`update session_access set is_recurring = (select s.is_recurring from sessions s where s.id = session_access.session_id)`.execute(db);
  await db.schema.dropIndex('session_access_keys_idx').execute();
  await db.schema
    .createIndex('session_access_keys_idx')
    .on('session_access')
    .columns(['user_id', 'starts_at', 'session_id', 'org_id', 'is_public', 'type', 'status', 'search_name', 'is_recurring'])
    .execute();
  await db.schema.createIndex('sessions_never_indexed_idx').on('sessions').column('org_id').where(sql.ref('indexed_through'), 'is', null).execute();
  await dropAccessTriggers(db, dialect);
  await accessTriggers(db, dialect, ['org_id', 'starts_at', 'is_public', 'type', 'status', 'search_name', 'is_recurring']);
}
