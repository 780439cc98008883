import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/** The flags, each with the table whose rows set it. */
const FLAGS = [
  { column: 'has_overrides', table: 'session_overrides' },
  { column: 'has_participants', table: 'session_participants' },
] as const;

/**
 * sessions.has_overrides and sessions.has_participants: 1 once a row of session_overrides or
 * session_participants has named the session (triggers on insert and on a move to another
 * session); never cleared. A dated page reads its keys' sessions rows anyway, and looks up an
 * override or counts participants only where the flag is set: the two per-key lookups were
 * about 40 % of the statement, and most occurrences have neither (issue 36).
 */
export async function up(db: AnyDb, dialect: Dialect): Promise<void> {
  for (const { column, table } of FLAGS) {
    await db.schema.alterTable('sessions').addColumn(column, 'integer', (c) => c.notNull().defaultTo(0)).execute();
    await sql.raw(`update sessions set ${column} = 1 where exists (select 1 from ${table} t where t.session_id = sessions.id)`).execute(db);
    await flagTriggers(db, dialect, column, table);
  }
}

async function flagTriggers(db: AnyDb, dialect: Dialect, column: string, table: string): Promise<void> {
  // Only a session whose flag is still 0 is written: later rows cost one lookup by key.
  const set = `update sessions set ${column} = 1 where id = new.session_id and ${column} = 0;`;
  if (dialect.name === 'postgres') {
    await sql.raw(`create function focus_sessions_${column}() returns trigger language plpgsql as $$ begin ${set} return null; end $$`).execute(db);
    await sql.raw(`create trigger ${table}_${column} after insert or update of session_id on ${table} for each row execute function focus_sessions_${column}()`).execute(db);
    return;
  }
  await sql.raw(`create trigger ${table}_${column}_insert after insert on ${table} begin ${set} end`).execute(db);
  await sql.raw(`create trigger ${table}_${column}_move after update of session_id on ${table} begin ${set} end`).execute(db);
}
