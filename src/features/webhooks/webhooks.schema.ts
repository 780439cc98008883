import { type Static, Type } from 'typebox';
import { Named } from '../../toolkit/openapi.js';
import { Cursor, Envelope, Instant, Limit, Nullable, Page, StringEnum } from '../../toolkit/schema-helpers.js';
import { DELIVERED_EVENTS, MAX_WEBHOOKS_PER_USER, WEBHOOK_EVENTS } from './webhooks.events.js';

export const MAX_DELIVERY_PAGE = 100;
export const DEFAULT_DELIVERY_PAGE = 50;

const NOW = '2026-12-01T08:00:00.000Z';
const URL_EXAMPLE = 'https://hooks.example.com/focus';
const EventType = StringEnum(WEBHOOK_EVENTS, { description: 'An event type.' });
const Events = Type.Array(EventType, {
  minItems: 1,
  maxItems: WEBHOOK_EVENTS.length,
  uniqueItems: true,
  description: 'The events to deliver, at least one, each at most once.',
});
const WebhookUrl = Type.String({
  minLength: 1,
  maxLength: 2048,
  description:
    'An `http` or `https` URL. A host that is or resolves to a loopback, private or link-local address is refused (422) unless the server allows private destinations.',
});

const webhookFields = {
  id: Type.String({ pattern: '^[0-9]+$', readOnly: true, description: 'Webhook id, digits as a string (a number in paths).' }),
  url: Type.String({ description: 'Where deliveries are POSTed.' }),
  events: Type.Array(EventType, { description: 'The events delivered.' }),
  description: Nullable(Type.String(), { description: 'Your note, or null.' }),
  active: Type.Boolean({ description: 'False: nothing is delivered to it, already queued deliveries included (they are marked failed when it is turned off).' }),
  created_at: Instant({ readOnly: true }),
};
const example = { id: '3', url: URL_EXAMPLE, events: ['session.started', 'task.updated'], description: 'Chat status', active: true, created_at: NOW };
const Description = Type.String({ maxLength: 500 });
const Secret = Type.String({
  pattern: '^whsec_[A-Za-z0-9+/=]{32,}$',
  description: 'The signing secret (`whsec_` + base64 of 32 random bytes). Shown only in this answer: keep it to verify deliveries.',
});
const SECRET_EXAMPLE = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

export const WebhookSchema = Named(
  'Webhook',
  Type.Object(webhookFields, { additionalProperties: false, description: 'A webhook: where the events you may see are delivered.', examples: [example] }),
);
export type Webhook = Static<typeof WebhookSchema>;

export const CreatedWebhookSchema = Named(
  'WebhookCreated',
  Type.Object(
    {
      ...webhookFields,
      secret: Secret,
    },
    { additionalProperties: false, description: 'A new webhook, with its signing secret (shown once).', examples: [{ ...example, secret: SECRET_EXAMPLE }] },
  ),
);
export type CreatedWebhook = Static<typeof CreatedWebhookSchema>;

export const CreateWebhookBody = Named(
  'WebhookCreate',
  Type.Object(
    {
      url: WebhookUrl,
      events: Events,
      description: Type.Optional(Nullable(Description, { description: 'A note for yourself, up to 500 characters.' })),
    },
    {
      additionalProperties: false,
      description: `A new webhook; you may keep up to ${MAX_WEBHOOKS_PER_USER}.`,
      examples: [{ url: URL_EXAMPLE, events: ['session.started', 'task.updated'], description: 'Chat status' }],
    },
  ),
);
export type CreateWebhookBody = Static<typeof CreateWebhookBody>;

export const UpdateWebhookBody = Named(
  'WebhookUpdate',
  Type.Object(
    {
      url: Type.Optional(WebhookUrl),
      events: Type.Optional(Events),
      description: Type.Optional(Nullable(Description, { description: 'A note for yourself, up to 500 characters; null clears it.' })),
      active: Type.Optional(Type.Boolean({ description: 'False stops delivery at once (queued deliveries are marked failed); true resumes it for new events.' })),
    },
    {
      additionalProperties: false,
      minProperties: 1,
      description: 'The fields to change; the others are kept. Checked as at registration.',
      examples: [{ events: ['session.started'], active: false }],
    },
  ),
);
export type UpdateWebhookBody = Static<typeof UpdateWebhookBody>;

export const RotatedSecretSchema = Named(
  'WebhookSecretRotated',
  Type.Object(
    {
      secret: Secret,
      previous_secret_expires_at: Instant({ description: 'Until then deliveries are signed with the replaced secret too: two `v1,` signatures.' }),
    },
    { additionalProperties: false, description: 'The new signing secret (shown once).', examples: [{ secret: SECRET_EXAMPLE, previous_secret_expires_at: '2026-12-02T08:00:00.000Z' }] },
  ),
);
export const RotatedSecretEnvelope = Envelope('WebhookSecretRotatedEnvelope', RotatedSecretSchema, 'The new secret.');

export const WebhookEnvelope = Envelope('WebhookEnvelope', WebhookSchema, 'One webhook.');
export const CreatedWebhookEnvelope = Envelope('WebhookCreatedEnvelope', CreatedWebhookSchema, 'The new webhook with its secret.');
export const WebhookList = Page('WebhookList', WebhookSchema, 'Your webhooks, oldest first.');

export const DeliverySchema = Named(
  'WebhookDelivery',
  Type.Object(
    {
      event_id: Type.String({ description: 'The `webhook-id` header of every attempt: receivers de-duplicate on it.' }),
      type: StringEnum(DELIVERED_EVENTS, { description: 'The event type (`webhook.test` for a test).' }),
      timestamp: Instant({ description: 'The event’s own instant: the payload’s `timestamp`.' }),
      attempts: Type.Integer({ minimum: 0, description: 'Attempts made so far.' }),
      last_status: Nullable(Type.Integer(), { description: 'HTTP status of the last attempt; null before the first or when it got no answer.' }),
      next_attempt_at: Nullable(Instant(), { description: 'When the next attempt is due; null once delivered or failed.' }),
      delivered_at: Nullable(Instant(), { description: 'When a 2xx answer came; null until then.' }),
      failed_at: Nullable(Instant(), { description: 'When the last retry failed and delivery stopped; null otherwise.' }),
    },
    {
      additionalProperties: false,
      description: 'One event sent (or to be sent) to a webhook.',
      examples: [
        {
          event_id: 'msg_2p8WcB1Ez0x5Tq7YkLm3',
          type: 'session.started',
          timestamp: NOW,
          attempts: 1,
          last_status: 200,
          next_attempt_at: null,
          delivered_at: '2026-12-01T08:00:00.412Z',
          failed_at: null,
        },
      ],
    },
  ),
);
export type Delivery = Static<typeof DeliverySchema>;
export const DeliveryEnvelope = Envelope('WebhookDeliveryEnvelope', DeliverySchema, 'One delivery.');
export const DeliveryList = Page('WebhookDeliveryList', DeliverySchema, 'Deliveries of one webhook, latest first.');

export const ListDeliveriesQuery = Type.Object(
  { limit: Type.Optional(Limit(MAX_DELIVERY_PAGE, DEFAULT_DELIVERY_PAGE)), cursor: Type.Optional(Cursor) },
  { additionalProperties: false },
);
export type ListDeliveriesQuery = Static<typeof ListDeliveriesQuery>;

export const ListWebhooksQuery = Type.Object(
  { limit: Type.Optional(Limit(MAX_WEBHOOKS_PER_USER, MAX_WEBHOOKS_PER_USER)), cursor: Type.Optional(Cursor) },
  { additionalProperties: false },
);
export type ListWebhooksQuery = Static<typeof ListWebhooksQuery>;
