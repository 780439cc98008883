/** Every event a webhook may subscribe to (contract section 9). */
export const WEBHOOK_EVENTS = [
  'session.created',
  'session.updated',
  'session.deleted',
  'session.participation',
  'session.starting',
  'session.started',
  'session.ended',
  'task.created',
  'task.updated',
  'task.deleted',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
/** Sent on request (`POST /webhooks/{id}/test`) to one webhook, whatever it subscribes to. */
export const TEST_EVENT = 'webhook.test';
/** Every type a delivery may carry. */
export const DELIVERED_EVENTS = [...WEBHOOK_EVENTS, TEST_EVENT] as const;
export type DeliveredEvent = (typeof DELIVERED_EVENTS)[number];
/** How long a rotated-out secret keeps signing beside the new one. */
export const PREVIOUS_SECRET_MS = 24 * 3_600_000;

/** The events the clock raises per occurrence (`session.starting`: one per reminder, contract section 10). */
export const TIME_EVENTS = ['session.starting', 'session.started', 'session.ended'] as const;
export type TimeEvent = (typeof TIME_EVENTS)[number];

/** Whether these subscribed events include a time-triggered one (the webhook's `time_events` flag). */
export const listensForTime = (events: readonly string[]): boolean => TIME_EVENTS.some((event) => events.includes(event));

/**
 * The pause after each failed attempt (contract section 9), ±20 % jitter; after the last
 * one fails the delivery is marked failed. 8 attempts over about 31 hours.
 */
export const RETRY_DELAYS_MS = [5_000, 20_000, 120_000, 600_000, 3_600_000, 21_600_000, 86_400_000] as const;
export const RETRY_JITTER = 0.2;

/** A webhook user may keep this many webhooks. */
export const MAX_WEBHOOKS_PER_USER = 20;
/** A payload larger than this carries `{id}` only as its `data` (the receiver reads the record through the API). */
export const MAX_PAYLOAD_BYTES = 64 * 1024;
/** One attempt: connect, send and the answer's status, all within this. */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** When the attempt after `attempts` failed ones is due, or undefined when none is left. */
export function nextAttemptDelay(attempts: number, scale = 1, random = Math.random): number | undefined {
  const base = RETRY_DELAYS_MS[attempts - 1];
  if (base === undefined) return undefined;
  return Math.round(base * scale * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random()));
}
