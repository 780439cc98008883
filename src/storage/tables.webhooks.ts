import type { ColumnType, Generated } from 'kysely';
import type { Flag, JsonText } from './columns.js';
import type { CalendarDate, Instant } from '../domain/vocabulary.js';

/* The webhook tables (migrations 0010, 0014, 0021 and 0035), in the column conventions of tables.ts. */

/** A user's subscription to events (contract section 9). */
export interface WebhooksTable {
  id: Generated<number>;
  user_id: number;
  url: string;
  /** The event types subscribed to. */
  events: JsonText<string[]>;
  description: string | null;
  /** `whsec_…`: shown once at creation, used to sign every delivery. */
  secret: string;
  created_at: Instant;
  /** The lease of the instance sending to it (one at a time, one attempt at a time); null when free. */
  claimed_until: ColumnType<Instant | null, Instant | null | undefined, Instant | null>;
  /** 0: nothing is delivered to it, queued deliveries included. */
  active: ColumnType<Flag, Flag | undefined, Flag>;
  /** 1: `events` holds a time-triggered event (migration 0035; set by the repository with `events`). */
  time_events: ColumnType<Flag, Flag | undefined, Flag>;
  /** The secret a rotation replaced: it signs beside `secret` until `previous_secret_until`. */
  previous_secret: ColumnType<string | null, string | null | undefined, string | null>;
  previous_secret_until: ColumnType<Instant | null, Instant | null | undefined, Instant | null>;
}

/** One event's body, stored once and shared by its deliveries to every webhook that receives the same bytes. */
export interface WebhookPayloadsTable {
  id: Generated<number>;
  type: string;
  /** The event's own instant (the body's `timestamp`). */
  occurred_at: Instant;
  /** The JSON body sent, `{type, timestamp, data}`. */
  body: string;
  created_at: Instant;
}

/**
 * One event for one webhook: the outbox the dispatcher drains. Pending while
 * `next_attempt_at` is set; sent only by the instance holding the webhook's lease.
 */
export interface WebhookDeliveriesTable {
  id: Generated<number>;
  webhook_id: number;
  payload_id: number;
  /** `msg_…`, the `webhook-id` header: the same on every attempt. */
  event_id: string;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: Instant | null;
  last_status: number | null;
  delivered_at: Instant | null;
  failed_at: Instant | null;
}

/** Where the webhook jobs are: `fanout` (a change-log position) and `clock` (the last instant checked). */
export interface WebhookStateTable {
  name: string;
  position: number | null;
  instant: Instant | null;
}

/** A time-triggered event already enqueued: the key makes enqueuing it idempotent across instances. */
export interface WebhookTriggersTable {
  webhook_id: number;
  session_id: number;
  occurrence_date: CalendarDate;
  type: string;
  fires_at: Instant;
}
