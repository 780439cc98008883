import { parseJson } from '../../storage/columns.js';
import type { WebhookDeliveryRow, WebhookPayloadsTable, WebhookRow } from '../../storage/tables.js';
import type { DeliveredEvent, WebhookEvent } from './webhooks.events.js';
import type { Delivery, Webhook } from './webhooks.schema.js';

/** The one place a webhook row becomes its API shape; the secret never appears in it. */
export function toWebhook(row: WebhookRow): Webhook {
  return {
    id: String(row.id),
    url: row.url,
    events: parseJson(row.events) as WebhookEvent[],
    description: row.description,
    active: row.active === 1,
    created_at: row.created_at,
  };
}

export function toDelivery(row: Omit<WebhookDeliveryRow, 'webhook_id' | 'payload_id'> & Pick<WebhookPayloadsTable, 'type' | 'occurred_at'>): Delivery {
  return {
    event_id: row.event_id,
    type: row.type as DeliveredEvent,
    timestamp: row.occurred_at,
    attempts: row.attempts,
    last_status: row.last_status,
    next_attempt_at: row.delivered_at === null && row.failed_at === null ? row.next_attempt_at : null,
    delivered_at: row.delivered_at,
    failed_at: row.failed_at,
  };
}
