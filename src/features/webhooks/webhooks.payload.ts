import { randomBytes } from 'node:crypto';
import { type DeliveredEvent, MAX_PAYLOAD_BYTES } from './webhooks.events.js';

/** `msg_` + 16 random bytes: the event's `webhook-id`, fixed when it is enqueued. */
export const newEventId = () => `msg_${randomBytes(16).toString('base64url')}`;

/** What an event's `data` is: a record (`{id}` when gone), or a participation around its session record. */
export type EventData = { id: string | number; minutes_before?: number } | { session: { id: string | number } };

/** One event for one webhook, before it is stored: webhooks receiving the same bytes share one stored payload. */
export interface OutgoingEvent {
  webhookId: number;
  type: DeliveredEvent;
  /** The event's own instant (the body's `timestamp`). */
  occurredAt: string;
  /** The JSON body sent (and signed) on every attempt. */
  body: string;
}

/**
 * The body `{type, timestamp, data}` of an event. Data larger than MAX_PAYLOAD_BYTES has
 * its record cut to `{id}` (a reminder keeps `minutes_before`, a participation keeps what happened): the receiver reads the
 * record through the API.
 */
export function bodyOf(type: DeliveredEvent, timestamp: string, data: EventData): string {
  const body = JSON.stringify({ type, timestamp, data });
  if (Buffer.byteLength(body) <= MAX_PAYLOAD_BYTES) return body;
  const cut = 'session' in data ? { ...data, session: { id: data.session.id } } : { id: data.id, ...('minutes_before' in data ? { minutes_before: data.minutes_before } : {}) };
  return JSON.stringify({ type, timestamp, data: cut });
}

export function eventOf(q: { webhookId: number; type: DeliveredEvent; timestamp: string; data: EventData }): OutgoingEvent {
  return { webhookId: q.webhookId, type: q.type, occurredAt: q.timestamp, body: bodyOf(q.type, q.timestamp, q.data) };
}
