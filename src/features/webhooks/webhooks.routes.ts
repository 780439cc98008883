import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { locationOf } from '../../toolkit/api.js';
import { jsonResponse } from '../../toolkit/openapi.js';
import { outsideGate } from '../../toolkit/outside-gate.js';
import { problemResponses } from '../../toolkit/problem.schema.js';
import { IdParams } from '../../toolkit/schema-helpers.js';
import { MAX_WEBHOOKS_PER_USER } from './webhooks.events.js';
import {
  CreateWebhookBody,
  CreatedWebhookEnvelope,
  DeliveryEnvelope,
  DeliveryList,
  ListDeliveriesQuery,
  ListWebhooksQuery,
  MAX_DELIVERY_PAGE,
  RotatedSecretEnvelope,
  UpdateWebhookBody,
  WebhookEnvelope,
  WebhookList,
} from './webhooks.schema.js';
import type { WebhooksService } from './webhooks.service.js';

const tags = ['webhooks'];
const common = [401, 429, 503] as const;

type App = Parameters<FastifyPluginAsyncTypebox>[0];

export const webhooksRoutes: FastifyPluginAsyncTypebox<{ webhooks: WebhooksService }> = async (app, { webhooks }) => {
  webhookRoutes(app, webhooks);
  webhookActionRoutes(app, webhooks);
};

/** Registering, listing, reading and changing a webhook. */
function webhookRoutes(app: App, webhooks: WebhooksService): void {
  app.post(
    '/webhooks',
    {
      schema: {
        tags,
        operationId: 'createWebhook',
        summary: 'Register a webhook',
        description:
          'Delivers the chosen events you may see to `url`, signed per Standard Webhooks 1.0 with the `secret` of the answer (shown only here). ' +
          'Only `http`/`https`; a host that is or resolves to a loopback, private or link-local address is 422 on `/url` unless the server allows it. ' +
          `At most ${MAX_WEBHOOKS_PER_USER} webhooks per user (409 beyond).`,
        body: CreateWebhookBody,
        response: {
          201: jsonResponse('The webhook with its signing secret; `Location` names it.', CreatedWebhookEnvelope),
          ...problemResponses(400, 409, 413, 415, 422, ...common),
        },
      },
    },
    async (request, reply) => {
      const webhook = await webhooks.create(request.user, request.body, (work) => outsideGate(request, work));
      return reply.code(201).header('location', locationOf('webhooks', webhook.id)).send({ data: webhook });
    },
  );

  app.get(
    '/webhooks',
    {
      schema: {
        tags,
        operationId: 'listWebhooks',
        summary: 'List your webhooks',
        description: 'Your webhooks, oldest first, without their secrets.',
        querystring: ListWebhooksQuery,
        response: { 200: jsonResponse('Your webhooks.', WebhookList), ...problemResponses(400, 422, ...common) },
      },
    },
    (request) => webhooks.list(request.user, request.query),
  );

  app.get(
    '/webhooks/:id',
    {
      schema: {
        tags,
        operationId: 'getWebhook',
        summary: 'Get one of your webhooks',
        description: 'Without its secret. Another user’s webhook is 404.',
        params: IdParams,
        response: { 200: jsonResponse('The webhook.', WebhookEnvelope), ...problemResponses(404, ...common) },
      },
    },
    async (request) => ({ data: await webhooks.get(request.user, request.params.id) }),
  );

  app.patch(
    '/webhooks/:id',
    {
      schema: {
        tags,
        operationId: 'updateWebhook',
        summary: 'Change a webhook',
        description:
          'Changes `url`, `events`, `description` or `active`, checked as at registration (a URL inside the network is 422 on `/url`). ' +
          '`active: false` stops delivery at once and marks queued deliveries failed; `active: true` delivers events from then on. Another user’s webhook is 404.',
        params: IdParams,
        body: UpdateWebhookBody,
        response: { 200: jsonResponse('The webhook as changed.', WebhookEnvelope), ...problemResponses(400, 404, 413, 415, 422, ...common) },
      },
    },
    async (request) => ({ data: await webhooks.update(request.user, request.params.id, request.body, (work) => outsideGate(request, work)) }),
  );
}

/** Rotating its secret, testing, deleting it and listing its deliveries. */
function webhookActionRoutes(app: App, webhooks: WebhooksService): void {
  app.post(
    '/webhooks/:id/rotate-secret',
    {
      schema: {
        tags,
        operationId: 'rotateWebhookSecret',
        summary: 'Rotate a webhook’s signing secret',
        description:
          'Answers a new secret (shown only here). For 24 hours deliveries carry two `v1,` signatures, with the new secret and the replaced one, ' +
          'so receivers can switch without losing any; rotating again within them drops the older one at once. Another user’s webhook is 404.',
        params: IdParams,
        response: { 200: jsonResponse('The new secret.', RotatedSecretEnvelope), ...problemResponses(404, ...common) },
      },
    },
    async (request) => ({ data: await webhooks.rotateSecret(request.user, request.params.id) }),
  );

  app.post(
    '/webhooks/:id/test',
    {
      schema: {
        tags,
        operationId: 'testWebhook',
        summary: 'Send a test event to a webhook',
        description:
          'Queues a `webhook.test` event (`data: {id}` names the webhook) to this webhook only, due now, whatever its `events`; it is retried and listed like any delivery. ' +
          'An inactive webhook is 409. Another user’s webhook is 404.',
        params: IdParams,
        response: { 202: jsonResponse('The delivery queued.', DeliveryEnvelope), ...problemResponses(404, 409, ...common) },
      },
    },
    async (request, reply) => reply.code(202).send({ data: await webhooks.test(request.user, request.params.id) }),
  );

  app.delete(
    '/webhooks/:id',
    {
      schema: {
        tags,
        operationId: 'deleteWebhook',
        summary: 'Delete a webhook',
        description: 'Stops deliveries at once; pending ones are dropped. Another user’s webhook is 404.',
        params: IdParams,
        response: { 204: { type: 'null', description: 'Deleted.' }, ...problemResponses(404, ...common) },
      },
    },
    async (request, reply) => {
      await webhooks.delete(request.user, request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/webhooks/:id/deliveries',
    {
      schema: {
        tags,
        operationId: 'listWebhookDeliveries',
        summary: 'List a webhook’s deliveries',
        description: `Latest first, up to ${MAX_DELIVERY_PAGE} a page: each event’s id, type, attempts, last status, next attempt and outcome. Another user’s webhook is 404.`,
        params: IdParams,
        querystring: ListDeliveriesQuery,
        response: { 200: jsonResponse('A page of deliveries.', DeliveryList), ...problemResponses(400, 404, 422, ...common) },
      },
    },
    (request) => webhooks.deliveries(request.user, request.params.id, request.query),
  );
}
