import { randomBytes } from 'node:crypto';
import type { NewWebhookDelivery } from '../../storage/tables.js';
import { MAX_PAYLOAD_BYTES, type WebhookEvent } from './webhooks.events.js';

/** `msg_` + 16 random bytes: the event's `webhook-id`, fixed when it is enqueued. */
export const newEventId = () => `msg_${randomBytes(16).toString('base64url')}`;

/** What an event's `data` is: a record (`{id}` when gone), or a participation around its session record. */
export type EventData = { id: string | number } | { session: { id: string | number } };

/**
 * A delivery row for one event: the body `{type, timestamp, data}` as it will be sent (and
 * signed) on every attempt. Data larger than MAX_PAYLOAD_BYTES has its record cut to
 * `{id}` (a participation keeps what happened): the receiver reads the record through the API.
 */
export function deliveryOf(q: { webhookId: number; type: WebhookEvent; timestamp: string; data: EventData; now: string }): NewWebhookDelivery {
  let payload = JSON.stringify({ type: q.type, timestamp: q.timestamp, data: q.data });
  if (Buffer.byteLength(payload) > MAX_PAYLOAD_BYTES) {
    const cut = 'session' in q.data ? { ...q.data, session: { id: q.data.session.id } } : { id: q.data.id };
    payload = JSON.stringify({ type: q.type, timestamp: q.timestamp, data: cut });
  }
  return {
    webhook_id: q.webhookId,
    event_id: newEventId(),
    type: q.type,
    payload,
    occurred_at: q.timestamp,
    attempts: 0,
    next_attempt_at: q.now,
    claimed_until: null,
    last_status: null,
    delivered_at: null,
    failed_at: null,
    created_at: q.now,
  };
}
