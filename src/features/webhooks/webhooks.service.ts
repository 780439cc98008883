import { randomBytes } from 'node:crypto';
import type { Db, Storage } from '../../storage/database.js';
import { conflict, notFound, validationFailed } from '../../toolkit/errors.js';
import type { StepAside } from '../../toolkit/outside-gate.js';
import { decodeCursor, encodeCursor } from '../../toolkit/paging.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { type ResolveOptions, refuseHost, refuseUrlSyntax } from './webhooks.address.js';
import { MAX_WEBHOOKS_PER_USER } from './webhooks.events.js';
import { toDelivery, toWebhook } from './webhooks.model.js';
import { createWebhooksRepository } from './webhooks.repository.js';
import { type CreateWebhookBody, type CreatedWebhook, DEFAULT_DELIVERY_PAGE, type ListDeliveriesQuery, type ListWebhooksQuery } from './webhooks.schema.js';

export interface WebhookSettings {
  /** WEBHOOK_ALLOW_PRIVATE: internal destinations allowed. */
  allowPrivate: boolean;
  /** WEBHOOK_RETRY_SCALE: multiplies the retry delays (tests). */
  retryScale: number;
  /** WEBHOOK_DNS_SERVERS: the DNS servers destinations are resolved with (default: the system's). */
  dnsServers?: ResolveOptions['dnsServers'];
}

/** `whsec_` + base64 of 32 random bytes: the format Standard Webhooks libraries read. */
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

export type WebhooksService = ReturnType<typeof createWebhooksService>;

/** A user's webhooks. Built once per storage. */
export function createWebhooksService(storage: Storage, settings: WebhookSettings) {
  const repo = createWebhooksRepository(storage);

  async function underCap(db: Db, user: AuthenticatedUser): Promise<void> {
    if ((await repo.countOf(db, user.id)) >= MAX_WEBHOOKS_PER_USER) throw conflict(`You already have ${MAX_WEBHOOKS_PER_USER} webhooks; delete one first.`);
  }

  async function own(user: AuthenticatedUser, id: number) {
    const row = await repo.find(storage.db, { userId: user.id, id });
    if (row === undefined) throw notFound('webhook');
    return row;
  }

  return {
    async create(user: AuthenticatedUser, body: CreateWebhookBody, aside: StepAside = (work) => work()): Promise<CreatedWebhook> {
      const malformed = refuseUrlSyntax(body.url);
      if (malformed !== undefined) throw validationFailed([{ path: '/url', message: malformed }]);
      // The cap before the lookup: a user at the limit costs no DNS query (contract section 13).
      await underCap(storage.db, user);
      // The lookup waits outside the request gate: a silent DNS server holds no slot of the API.
      const refused = await aside(() => refuseHost(body.url, settings.allowPrivate, settings));
      if (refused !== undefined) throw validationFailed([{ path: '/url', message: refused }]);
      const secret = newSecret();
      const row = await storage.transaction(async (trx) => {
        // The user's row locked (PostgreSQL; SQLite's write transactions take turns): concurrent
        // creates count one after another, so the cap holds under a race.
        await storage.forUpdate(trx.selectFrom('users').select('id').where('id', '=', user.id)).execute();
        await underCap(trx, user);
        return repo.insert(trx, {
          userId: user.id,
          url: body.url,
          events: [...body.events],
          description: body.description ?? null,
          secret,
          now: new Date().toISOString(),
        });
      });
      return { ...toWebhook(row), secret };
    },

    async list(user: AuthenticatedUser, query: ListWebhooksQuery) {
      const limit = query.limit ?? MAX_WEBHOOKS_PER_USER;
      const afterId = query.cursor === undefined ? undefined : decodeCursor(query.cursor, ['number'] as const)[0];
      const rows = await repo.list({ userId: user.id, afterId, limit: limit + 1 });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return { data: page.map(toWebhook), next_cursor: rows.length > limit && last !== undefined ? encodeCursor([last.id]) : null };
    },

    get: async (user: AuthenticatedUser, id: number) => toWebhook(await own(user, id)),

    async delete(user: AuthenticatedUser, id: number): Promise<void> {
      const removed = await storage.transaction((trx) => repo.remove(trx, { userId: user.id, id }));
      if (!removed) throw notFound('webhook');
    },

    async deliveries(user: AuthenticatedUser, id: number, query: ListDeliveriesQuery) {
      await own(user, id);
      const limit = query.limit ?? DEFAULT_DELIVERY_PAGE;
      const beforeId = query.cursor === undefined ? undefined : decodeCursor(query.cursor, ['number'] as const)[0];
      const rows = await repo.deliveries({ webhookId: id, beforeId, limit: limit + 1 });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return { data: page.map(toDelivery), next_cursor: rows.length > limit && last !== undefined ? encodeCursor([last.id]) : null };
    },
  };
}
