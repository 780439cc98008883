import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../dialect.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

/**
 * session_access: one row per person tied to a session (its creator, a collaborator, a
 * participant in any occurrence), with the session's org, public flag and start copied, so
 * that a listing reads a reader's personal sessions in page order from one index instead of
 * gathering the collaborator and participant rows of every such session (issue 36). The
 * database keeps it, by triggers: every write to the three sources (a join, a leave, a
 * split handing participation over, a cascade) updates it in its own transaction.
 */
export async function up(db: AnyDb, dialect: Dialect): Promise<void> {
  const id = dialect.idType;
  await db.schema
    .createTable('session_access')
    .addColumn('user_id', id, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('session_id', id, (c) => c.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('org_id', id, (c) => c.notNull())
    .addColumn('starts_at', 'text', (c) => c.notNull())
    .addColumn('is_public', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('session_access_pk', ['user_id', 'session_id'])
    .execute();
  // A reader's personal sessions in listing order; org and flag ride along for the filter.
  await db.schema.createIndex('session_access_listing_idx').on('session_access').columns(['user_id', 'starts_at', 'session_id', 'org_id', 'is_public']).execute();
  await db.schema.createIndex('session_access_session_idx').on('session_access').columns(['session_id']).execute();
  await sql`
    insert into session_access (user_id, session_id, org_id, starts_at, is_public)
    select ties.user_id, s.id, s.org_id, s.starts_at, s.is_public
    from (select created_by as user_id, id as session_id from sessions
          union select user_id, session_id from session_collaborators
          union select user_id, session_id from session_participants) ties
    join sessions s on s.id = ties.session_id`.execute(db);
  await accessTriggers(db, dialect, ['org_id', 'starts_at', 'is_public']);
}

/**
 * The triggers that keep session_access, copying `copied` (columns of both tables) from the
 * session row; migration 0029 builds them again with more columns.
 */
export async function accessTriggers(db: AnyDb, dialect: Dialect, copied: readonly string[]): Promise<void> {
  const t = triggerSql(copied);
  if (dialect.name === 'postgres') await postgresTriggers(db, t);
  else await sqliteTriggers(db, t);
}

/** Drops what accessTriggers created, named here beside the statements that create them (0029 rebuilds them). */
export async function dropAccessTriggers(db: AnyDb, dialect: Dialect): Promise<void> {
  if (dialect.name === 'postgres') {
    for (const table of TIE_TABLES) await sql.raw(`drop trigger ${table}_access on ${table}`).execute(db);
    for (const trigger of ['sessions_access_insert', 'sessions_access_update']) await sql.raw(`drop trigger ${trigger} on sessions`).execute(db);
    for (const fn of ['focus_session_access_tie', 'focus_session_access_session']) await sql.raw(`drop function ${fn}()`).execute(db);
  } else {
    const triggers = ['sessions_access_insert', 'sessions_access_update', 'sessions_access_creator', ...TIE_TABLES.flatMap((t) => [`${t}_access_insert`, `${t}_access_delete`, `${t}_access_update`])];
    for (const trigger of triggers) await sql.raw(`drop trigger ${trigger}`).execute(db);
  }
}

/** The tables whose rows tie a user to a session besides its creator. */
const TIE_TABLES = ['session_collaborators', 'session_participants'] as const;

type TriggerSql = ReturnType<typeof triggerSql>;

function triggerSql(columns: readonly string[]) {
  const COPIED = columns.join(', ');
  return {
    columns,
    /** The columns a session row's change copies into its access rows, changed in `a` vs `b`. */
    copiedChanged: (a: string, b: string) => columns.map((c) => `${a}.${c} is distinct from ${b}.${c}`).join(' or '),
    /** Adds `user`'s tie to `session` (from the sessions row), if none yet. */
    addTie: (user: string, session: string) => `
  insert into session_access (user_id, session_id, ${COPIED})
  select ${user}, s.id, ${columns.map((c) => `s.${c}`).join(', ')} from sessions s where s.id = ${session}
  on conflict do nothing;`,
    copyFromSession: `update session_access set ${columns.map((c) => `${c} = new.${c}`).join(', ')} where session_id = new.id;`,
  };
}

/** Drops `user`'s tie to `session` unless another source still ties them. */
const dropTie = (user: string, session: string) => `
  delete from session_access where user_id = ${user} and session_id = ${session}
    and not exists (select 1 from sessions s where s.id = ${session} and s.created_by = ${user})
    and not exists (select 1 from session_collaborators c where c.session_id = ${session} and c.user_id = ${user})
    and not exists (select 1 from session_participants p where p.session_id = ${session} and p.user_id = ${user});`;

async function postgresTriggers(db: AnyDb, { addTie, copyFromSession, columns }: TriggerSql): Promise<void> {
  await sql.raw(`
    create function focus_session_access_tie() returns trigger language plpgsql as $$
    begin
      if tg_op in ('DELETE', 'UPDATE') then ${dropTie('old.user_id', 'old.session_id')} end if;
      if tg_op in ('INSERT', 'UPDATE') then ${addTie('new.user_id', 'new.session_id')} end if;
      return null;
    end $$`).execute(db);
  await sql.raw(`
    create function focus_session_access_session() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then ${addTie('new.created_by', 'new.id')}
      else
        ${copyFromSession}
        if new.created_by is distinct from old.created_by then
          ${addTie('new.created_by', 'new.id')}
          ${dropTie('old.created_by', 'old.id')}
        end if;
      end if;
      return null;
    end $$`).execute(db);
  for (const table of TIE_TABLES) {
    await sql.raw(`create trigger ${table}_access after insert or delete or update of session_id, user_id on ${table} for each row execute function focus_session_access_tie()`).execute(db);
  }
  await sql.raw(`create trigger sessions_access_insert after insert on sessions for each row execute function focus_session_access_session()`).execute(db);
  // created_by named once: 0031 copies it as well.
  const watched = columns.includes('created_by') ? columns : [...columns, 'created_by'];
  await sql.raw(`
    create trigger sessions_access_update after update of ${watched.join(', ')} on sessions for each row
    when (${watched.map((c) => `old.${c} is distinct from new.${c}`).join(' or ')}) execute function focus_session_access_session()`).execute(db);
}

async function sqliteTriggers(db: AnyDb, { addTie, copyFromSession, copiedChanged, columns }: TriggerSql): Promise<void> {
  for (const table of TIE_TABLES) {
    await sql.raw(`create trigger ${table}_access_insert after insert on ${table} begin ${addTie('new.user_id', 'new.session_id')} end`).execute(db);
    await sql.raw(`create trigger ${table}_access_delete after delete on ${table} begin ${dropTie('old.user_id', 'old.session_id')} end`).execute(db);
    await sql.raw(`
      create trigger ${table}_access_update after update of session_id, user_id on ${table}
      begin ${dropTie('old.user_id', 'old.session_id')} ${addTie('new.user_id', 'new.session_id')} end`).execute(db);
  }
  await sql.raw(`create trigger sessions_access_insert after insert on sessions begin ${addTie('new.created_by', 'new.id')} end`).execute(db);
  await sql.raw(`
    create trigger sessions_access_update after update of ${columns.join(', ')} on sessions
    when ${copiedChanged('old', 'new').replaceAll('is distinct from', 'is not')} begin ${copyFromSession} end`).execute(db);
  await sql.raw(`
    create trigger sessions_access_creator after update of created_by on sessions when old.created_by is not new.created_by
    begin ${addTie('new.created_by', 'new.id')} ${dropTie('old.created_by', 'old.id')} end`).execute(db);
}
