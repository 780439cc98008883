import { WEBHOOK_EVENTS } from '../features/webhooks/webhooks.events.js';
import { WEBHOOK_PAYLOADS } from '../features/webhooks/webhooks.payloads.js';
import { type Components, documented } from './openapi.document.js';

const header = (name: string, description: string, example: string) => ({ name, in: 'header', required: true, description, schema: { type: 'string' }, example });

/** The Standard Webhooks 1.0 headers of every delivery. */
const SIGNATURE_HEADERS = [
  header('webhook-id', 'The event id (`msg_…`), the same on every attempt: de-duplicate on it.', 'msg_2p8WcB1Ez0x5Tq7YkLm3'),
  header('webhook-timestamp', 'Unix seconds when this attempt was signed.', '1795680000'),
  header('webhook-signature', '`v1,` + base64 HMAC-SHA256 of `id.timestamp.body` with the webhook’s secret; verify with `standardwebhooks` or `svix`.', 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4='),
];

/**
 * The OpenAPI 3.1 `webhooks` section: one POST per event type, its payload a component,
 * its headers the signature's. The receiver answers 2xx within 10 s or the delivery is
 * retried.
 */
export function webhooksSection(components: Components): Record<string, unknown> {
  return Object.fromEntries(
    WEBHOOK_EVENTS.map((type) => {
      const { schema, summary } = WEBHOOK_PAYLOADS[type];
      return [
        type,
        {
          post: {
            tags: ['webhooks'],
            operationId: `webhook.${type}`.replace(/\.(\w)/g, (_, c: string) => c.toUpperCase()),
            summary,
            description:
              `Sent to each of your webhooks subscribed to \`${type}\`. Answer 2xx within 10 s; anything else (a redirect included) is retried ` +
              'after about 5 s, 20 s, 2 min, 10 min, 1 h, 6 h and 24 h, then the delivery is marked failed. Events may arrive out of order and, ' +
              'rarely, twice: order by `timestamp`, de-duplicate on `webhook-id`.',
            security: [],
            parameters: SIGNATURE_HEADERS,
            requestBody: { required: true, content: { 'application/json': { schema: documented(schema, components) } } },
            responses: { '200': { description: 'Received (any 2xx will do).' } },
          },
        },
      ];
    }),
  );
}
