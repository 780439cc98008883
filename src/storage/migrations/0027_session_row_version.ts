import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/**
 * sessions.row_version: a random number the database draws anew on every change to a
 * session row and to its collaborators (triggers), so that a reader may keep a row it read
 * and know from this one column whether it is still the row (issue 36: a listing reads a
 * page's versions, not its 35 columns). Random rather than counted: an id SQLite hands out
 * again after a delete never meets a version of the row that had it before.
 */
export async function up(db: AnyDb, dialect: Dialect): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('row_version', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  if (dialect.name === 'postgres') {
    const draw = '(random() * 4503599627370496)::bigint';
    await sql.raw(`update sessions set row_version = ${draw}`).execute(db);
    await sql.raw(`
      create function focus_session_row_version() returns trigger language plpgsql as $$
      begin new.row_version := ${draw}; return new; end $$`).execute(db);
    await sql.raw(`create trigger sessions_row_version before insert or update on sessions for each row execute function focus_session_row_version()`).execute(db);
    // Any update of the row draws a new version (the trigger above).
    await sql.raw(`
      create function focus_session_collaborators_version() returns trigger language plpgsql as $$
      begin
        if tg_op in ('DELETE', 'UPDATE') then update sessions set row_version = 0 where id = old.session_id; end if;
        if tg_op in ('INSERT', 'UPDATE') then update sessions set row_version = 0 where id = new.session_id; end if;
        return null;
      end $$`).execute(db);
    await sql.raw(`create trigger session_collaborators_version after insert or delete or update on session_collaborators for each row execute function focus_session_collaborators_version()`).execute(db);
    return;
  }
  await sql`update sessions set row_version = (random() & 4503599627370495)`.execute(db);
  // Recursive triggers are off: the update inside does not fire this trigger again.
  await sql`create trigger sessions_row_version_insert after insert on sessions begin update sessions set row_version = (random() & 4503599627370495) where id = new.id; end`.execute(db);
  await sql`create trigger sessions_row_version_update after update on sessions begin update sessions set row_version = (random() & 4503599627370495) where id = new.id; end`.execute(db);
  for (const [event, ref] of [['insert', 'new'], ['delete', 'old']] as const) {
    await sql.raw(`create trigger session_collaborators_version_${event} after ${event} on session_collaborators begin update sessions set row_version = (random() & 4503599627370495) where id = ${ref}.session_id; end`).execute(db);
  }
  await sql`create trigger session_collaborators_version_update after update on session_collaborators begin
    update sessions set row_version = (random() & 4503599627370495) where id in (old.session_id, new.session_id); end`.execute(db);
}
