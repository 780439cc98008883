import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

/*
 * Dialect-neutral column types: booleans are 0/1 integers (better-sqlite3 cannot bind
 * booleans), instants are ISO 8601 UTC strings (they sort as text), calendar dates are
 * `YYYY-MM-DD` strings and structured values are JSON text. The same rows therefore
 * read back identically on SQLite and PostgreSQL.
 */
type Flag = 0 | 1;
type Instant = string;

export interface UsersTable {
  id: Generated<number>;
  handle: string;
  created_at: Instant;
}

export interface OrgsTable {
  id: number;
  created_at: Instant;
}

export interface MembershipsTable {
  user_id: number;
  org_id: number;
}

export interface TokensTable {
  id: Generated<number>;
  user_id: number;
  name: string | null;
  token_hash: string;
  created_at: Instant;
  expires_at: Instant | null;
  revoked_at: Instant | null;
  last_used_at: Instant | null;
}

export interface SessionsTable {
  id: Generated<number>;
  org_id: number;
  created_by: number;
  name: string;
  type: string;
  duration: number;
  schedule: string;
  /** Minutes after local midnight. */
  time_minutes: number;
  timezone: string;
  starts_at: Instant;
  ends_at: Instant;
  is_public: Flag;
  status: string;
  website_blocker_enabled: Flag;
  /** JSON: {mode, category, urls} or null. */
  website_blocker: string | null;
  snooze_enabled: Flag;
  /** JSON object: app name → boolean. */
  snooze_apps: string;
  is_recurring: Flag;
  recurring_start: string | null;
  recurring_ends: string | null;
  occurrence: string | null;
  /** JSON array of weekday numbers. */
  recurring_days: string;
  recurring_month_option: string | null;
  recurring_month_week_pos: number | null;
  recurring_month_week_day: number | null;
  fallback_option: number;
  created_at: Instant;
  updated_at: Instant;
}

export interface SessionCollaboratorsTable {
  session_id: number;
  user_id: number;
}

export interface SessionParticipantsTable {
  session_id: number;
  user_id: number;
  /** The occurrence joined, or '' for a one-off session. */
  occurrence_date: string;
  joined_at: Instant;
  completed_at: Instant | null;
}

export interface SessionExceptionsTable {
  session_id: number;
  /** A deleted occurrence of a recurring session. */
  occurrence_date: string;
}

export interface TasksTable {
  id: Generated<number>;
  owner_id: number;
  context: string;
  is_completed: Flag;
  source: string | null;
  source_id: number | null;
  session_id: number | null;
  /** 1 when inserted, +1 on every change; tells an upsert's insert from its update. */
  version: ColumnType<number, number | undefined, number>;
  created_at: Instant;
  updated_at: Instant;
}

export interface IdempotencyKeysTable {
  user_id: number;
  /** As the client sent it, unquoted. */
  key: string;
  /** Hash of method, URL and canonical body: what "the same request" means. */
  fingerprint: string;
  /** Null while the first request is still running. */
  status: number | null;
  content_type: string | null;
  location: string | null;
  body: string | null;
  claimed_at: Instant;
  expires_at: Instant;
}

export interface Database {
  users: UsersTable;
  orgs: OrgsTable;
  memberships: MembershipsTable;
  tokens: TokensTable;
  sessions: SessionsTable;
  session_collaborators: SessionCollaboratorsTable;
  session_participants: SessionParticipantsTable;
  session_exceptions: SessionExceptionsTable;
  tasks: TasksTable;
  idempotency_keys: IdempotencyKeysTable;
}

export type SessionRow = Selectable<SessionsTable>;
export type NewSession = Insertable<SessionsTable>;
export type TaskRow = Selectable<TasksTable>;
export type TokenRow = Selectable<TokensTable>;
