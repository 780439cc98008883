import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

// Migrations see an untyped database: the typed schema is what they produce.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = Kysely<any>;

export async function up(db: AnyDb, dialect: Dialect): Promise<void> {
  // Released: the statements stay in this order.
  await accountTables(db, dialect);
  await sessionTables(db, dialect);
  await taskTables(db, dialect);
}

/** Users, orgs, memberships and tokens. */
async function accountTables(db: AnyDb, dialect: Dialect): Promise<void> {
  const id = dialect.idType;
  await db.schema
    .createTable('users')
    .addColumn('id', id, dialect.idColumn)
    .addColumn('handle', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('orgs')
    .addColumn('id', 'bigint', (c) => c.primaryKey())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('memberships')
    .addColumn('user_id', id, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('org_id', 'bigint', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('memberships_pk', ['user_id', 'org_id'])
    .execute();
  await db.schema.createIndex('memberships_org_idx').on('memberships').columns(['org_id', 'user_id']).execute();

  await db.schema
    .createTable('tokens')
    .addColumn('id', id, dialect.idColumn)
    .addColumn('user_id', id, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text')
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('revoked_at', 'text')
    .addColumn('last_used_at', 'text')
    .execute();
}

/** Sessions, their collaborators, participants and removed occurrences. */
async function sessionTables(db: AnyDb, dialect: Dialect): Promise<void> {
  const id = dialect.idType;
  await db.schema
    .createTable('sessions')
    .addColumn('id', id, dialect.idColumn)
    .addColumn('org_id', 'bigint', (c) => c.notNull().references('orgs.id'))
    .addColumn('created_by', id, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('duration', 'integer', (c) => c.notNull())
    .addColumn('schedule', 'text', (c) => c.notNull())
    .addColumn('time_minutes', 'integer', (c) => c.notNull())
    .addColumn('timezone', 'text', (c) => c.notNull())
    .addColumn('starts_at', 'text', (c) => c.notNull())
    .addColumn('ends_at', 'text', (c) => c.notNull())
    .addColumn('is_public', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('website_blocker_enabled', 'integer', (c) => c.notNull())
    .addColumn('website_blocker', 'text')
    .addColumn('snooze_enabled', 'integer', (c) => c.notNull())
    .addColumn('snooze_apps', 'text', (c) => c.notNull())
    .addColumn('is_recurring', 'integer', (c) => c.notNull())
    .addColumn('recurring_start', 'text')
    .addColumn('recurring_ends', 'text')
    .addColumn('occurrence', 'text')
    .addColumn('recurring_days', 'text', (c) => c.notNull())
    .addColumn('recurring_month_option', 'text')
    .addColumn('recurring_month_week_pos', 'integer')
    .addColumn('recurring_month_week_day', 'integer')
    .addColumn('fallback_option', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // Listing order within an org, and the day filters on one-off sessions.
  await db.schema.createIndex('sessions_org_starts_idx').on('sessions').columns(['org_id', 'starts_at', 'id']).execute();
  await db.schema.createIndex('sessions_org_schedule_idx').on('sessions').columns(['org_id', 'is_recurring', 'schedule']).execute();
  await db.schema.createIndex('sessions_creator_idx').on('sessions').columns(['created_by', 'starts_at', 'id']).execute();

  await db.schema
    .createTable('session_collaborators')
    .addColumn('session_id', id, (c) => c.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('user_id', id, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('session_collaborators_pk', ['session_id', 'user_id'])
    .execute();
  await db.schema.createIndex('session_collaborators_user_idx').on('session_collaborators').columns(['user_id', 'session_id']).execute();

  await db.schema
    .createTable('session_participants')
    .addColumn('session_id', id, (c) => c.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('user_id', id, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('occurrence_date', 'text', (c) => c.notNull())
    .addColumn('joined_at', 'text', (c) => c.notNull())
    .addColumn('completed_at', 'text')
    .addPrimaryKeyConstraint('session_participants_pk', ['session_id', 'occurrence_date', 'user_id'])
    .execute();
  await db.schema.createIndex('session_participants_user_idx').on('session_participants').columns(['user_id', 'session_id']).execute();

  await db.schema
    .createTable('session_exceptions')
    .addColumn('session_id', id, (c) => c.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('occurrence_date', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('session_exceptions_pk', ['session_id', 'occurrence_date'])
    .execute();
}

async function taskTables(db: AnyDb, dialect: Dialect): Promise<void> {
  const id = dialect.idType;
  await db.schema
    .createTable('tasks')
    .addColumn('id', id, dialect.idColumn)
    .addColumn('owner_id', id, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('context', 'text', (c) => c.notNull())
    .addColumn('is_completed', 'integer', (c) => c.notNull())
    .addColumn('source', 'text')
    .addColumn('source_id', 'bigint')
    .addColumn('session_id', id, (c) => c.references('sessions.id').onDelete('set null'))
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // The upsert key of bulk imports; rows without an origin (NULLs) never collide.
  await db.schema.createIndex('tasks_origin_uq').on('tasks').columns(['owner_id', 'source', 'source_id']).unique().execute();
  await db.schema.createIndex('tasks_owner_idx').on('tasks').columns(['owner_id', 'id']).execute();
  await db.schema.createIndex('tasks_session_idx').on('tasks').column('session_id').execute();
}
