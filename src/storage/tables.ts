import type { ColumnType, Generated, Insertable, Kysely, Selectable } from 'kysely';
import type { Flag, JsonText } from './columns.js';
import type {
  Audience,
  CalendarDate,
  ChangeAction,
  ChangeKind,
  Instant,
  MonthOption,
  Occurrence,
  ParticipationAction,
  SessionType,
  SourceIdType,
  Status,
  WebsiteBlocker,
  WeekPosition,
} from '../domain/vocabulary.js';
import type { DeviceCodesTable, InvitesTable, OidcLoginsTable } from './tables.accounts.js';
import type { SessionAccessTable, SessionCollaboratorsTable, SessionExceptionsTable, SessionOccurrencesTable, SessionOverridesTable, SessionParticipantsTable } from './tables.sessions.js';
import type { WebhookDeliveriesTable, WebhookPayloadsTable, WebhookStateTable, WebhookTriggersTable, WebhooksTable } from './tables.webhooks.js';

export type * from './tables.webhooks.js';
export type * from './tables.accounts.js';
export type * from './tables.sessions.js';

/*
 * Dialect-neutral column types: booleans are 0/1 integers (better-sqlite3 cannot bind
 * booleans), instants are ISO 8601 UTC strings (they sort as text), calendar dates are
 * `YYYY-MM-DD` strings and structured values are JSON text. The same rows therefore
 * read back identically on SQLite and PostgreSQL.
 */

export interface UsersTable {
  id: Generated<number>;
  handle: string;
  created_at: Instant;
  /** IANA name in its canonical spelling; the database fills in `UTC`. */
  timezone: Generated<string>;
  /** Set by `focus users disable`: every way the user receives data is shut while it is (contract section 13). */
  disabled_at: Instant | null;
  /** argon2id (PHC string); null: the user cannot sign in with a password. */
  password_hash: Generated<string | null>;
  /** A verified email an admin set: how single sign-on finds the user. */
  email: Generated<string | null>;
  /** Home reminders: minutes before a session starts (JSON array; the database fills in `[5]`). */
  reminders: Generated<JsonText<number[]>>;
}

export interface OrgsTable {
  id: number;
  created_at: Instant;
}

export interface MembershipsTable {
  user_id: number;
  org_id: number;
  /** An org's admins manage its people (contract section 12). */
  role: Generated<'admin' | 'member'>;
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
  /** `cli`: issued by `focus tokens issue`; `personal`: made at /me/tokens; `app`: a connected app's (device grant); `session`: a browser's sign-in cookie. */
  kind: Generated<'cli' | 'personal' | 'app' | 'session'>;
  /** JSON array of scopes; null: all of the user's rights. */
  scopes: Generated<string | null>;
  /** A connected app's name (its OAuth client_id). */
  client: Generated<string | null>;
}

export interface SessionsTable {
  id: Generated<number>;
  org_id: number;
  created_by: number;
  name: string;
  type: SessionType;
  duration: number;
  schedule: CalendarDate;
  /** Minutes after local midnight. */
  time_minutes: number;
  timezone: string;
  starts_at: Instant;
  ends_at: Instant;
  is_public: Flag;
  status: Status;
  website_blocker_enabled: Flag;
  website_blocker: JsonText<WebsiteBlocker> | null;
  snooze_enabled: Flag;
  /** App name → whether snoozing applies. */
  snooze_apps: JsonText<Record<string, boolean>>;
  is_recurring: Flag;
  recurring_start: CalendarDate | null;
  recurring_ends: CalendarDate | null;
  occurrence: Occurrence | null;
  /** Weekday numbers, 0 = Sunday. */
  recurring_days: JsonText<number[]>;
  recurring_month_option: MonthOption | null;
  recurring_month_week_pos: WeekPosition | null;
  recurring_month_week_day: number | null;
  fallback_option: Flag;
  /** The session's own reminders (minutes before each occurrence); null: each involved person's home ones. */
  reminders: JsonText<number[]> | null;
  /** RFC 5545 DTSTART/RRULE/EXDATE lines of a series (null for a one-off session), kept with every change. */
  rrule: string | null;
  /** The name as keyword search compares it (foldForSearch). */
  search_name: string;
  /**
   * The occurrence index holds this session's occurrences through this local date; null
   * until it was first built (sessions stored before the index existed).
   */
  indexed_through: CalendarDate | null;
  /**
   * The index holds this series from this local date on (INDEX_PAST_DAYS before the day it
   * was written); null: from its first occurrence. Older days are expanded per request.
   */
  indexed_from: CalendarDate | null;
  created_at: Instant;
  updated_at: Instant;
  /** The iCalendar SEQUENCE: 0 when created, +1 with every change that moves updated_at (sessions repository `update`). */
  sequence: Generated<number>;
  /** The series a "this and following" edit split this one from (contract section 10); null otherwise. */
  split_from: Generated<number | null>;
  /** Drawn anew by the database on every change to the row or its collaborators (migration 0027). */
  row_version: Generated<number>;
  /** 1 once a session_overrides row has named the session; never cleared (a trigger, migration 0033). */
  has_overrides: Generated<Flag>;
  /** 1 once a session_participants row has named the session; never cleared (a trigger, migration 0033). */
  has_participants: Generated<Flag>;
}

export interface TasksTable {
  id: Generated<number>;
  owner_id: number;
  context: string;
  is_completed: Flag;
  source: string | null;
  /** The origin's id as text: the de-duplication key (`42` and `"42"` are one task). */
  source_id: string | null;
  /** The JSON type source_id was last sent with; null with it. */
  source_id_type: SourceIdType | null;
  session_id: number | null;
  /** 1 when inserted, +1 on every change; tells an upsert's insert from its update. */
  version: ColumnType<number, number | undefined, number>;
  created_at: Instant;
  updated_at: Instant;
  /** When it last became completed; null while it is not (focus statistics count it then). */
  completed_at: ColumnType<Instant | null, Instant | null | undefined, Instant | null>;
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

/**
 * The change log: one row per change of a session or task, written in the transaction of
 * the change itself, so a committed change is never without its row. Readers (the change
 * feed, live streams, webhooks) follow it by `position`, which is given in commit order:
 * see ChangesRepository.sequence (changelog/) for why it is not the id.
 */
export interface ChangesTable {
  id: Generated<number>;
  /** The place in commit order; null until storage sequences the committed row. */
  position: ColumnType<number | null, never, number>;
  kind: ChangeKind;
  action: ChangeAction;
  record_id: number;
  /** A session's org (before the change when it moved or was deleted); null for a task. */
  org_id: number | null;
  /** A task's owner, or a session's creator. */
  owner_id: number;
  /** Who could see the session before the change; null for a task and for a new session. */
  audience: JsonText<Audience> | null;
  /** Who made the change. */
  actor_id: number;
  changed_at: Instant;
  /**
   * A participation change: what the actor did, and the occurrence (a series' local date;
   * null for a one-off session). Null for every other change, and for participation
   * changes logged before migration 0013 (or by a server without it).
   */
  participation: ParticipationAction | null;
  occurrence_date: CalendarDate | null;
}

/** A calendar feed: a secret URL serving the user's sessions as iCalendar; revoking deletes the row. */
export interface CalendarFeedsTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  /** SHA-256 (hex) of the secret; the secret itself is shown once and never stored. */
  secret_hash: string;
  created_at: Instant;
}

/** The database as queries see it: every query function takes one (or a transaction of it). */
export type Db = Kysely<Database>;

export interface Database {
  users: UsersTable;
  orgs: OrgsTable;
  memberships: MembershipsTable;
  tokens: TokensTable;
  sessions: SessionsTable;
  session_collaborators: SessionCollaboratorsTable;
  session_participants: SessionParticipantsTable;
  session_access: SessionAccessTable;
  session_exceptions: SessionExceptionsTable;
  session_occurrences: SessionOccurrencesTable;
  session_overrides: SessionOverridesTable;
  tasks: TasksTable;
  idempotency_keys: IdempotencyKeysTable;
  changes: ChangesTable;
  calendar_feeds: CalendarFeedsTable;
  webhooks: WebhooksTable;
  webhook_payloads: WebhookPayloadsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_state: WebhookStateTable;
  webhook_triggers: WebhookTriggersTable;
  invites: InvitesTable;
  device_codes: DeviceCodesTable;
  oidc_logins: OidcLoginsTable;
}

export type SessionRow = Selectable<SessionsTable>;
export type NewSession = Insertable<SessionsTable>;
export type TaskRow = Selectable<TasksTable>;
export type OccurrenceRow = Selectable<SessionOccurrencesTable>;
export type ChangeRow = Selectable<ChangesTable>;
export type NewChange = Insertable<ChangesTable>;
export type CalendarFeedRow = Selectable<CalendarFeedsTable>;
export type WebhookRow = Selectable<WebhooksTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
export type NewWebhookDelivery = Insertable<WebhookDeliveriesTable>;
