import { randomBytes } from 'node:crypto';
import type { Db, Storage } from '../../storage/database.js';
import { conflict, notFound, validationFailed } from '../../toolkit/errors.js';
import type { StepAside } from '../../toolkit/outside-gate.js';
import { decodeCursor, encodeCursor } from '../../toolkit/paging.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { lockUser } from '../auth/auth.principals.js';
import { type ResolveOptions, refuseHost, refuseUrlSyntax } from './webhooks.address.js';
import { MAX_WEBHOOKS_PER_USER, PREVIOUS_SECRET_MS, TEST_EVENT } from './webhooks.events.js';
import { toDelivery, toWebhook } from './webhooks.model.js';
import { type Outbox, createOutbox } from './webhooks.outbox.js';
import { eventOf } from './webhooks.payload.js';
import { type WebhooksRepository, createWebhooksRepository } from './webhooks.repository.js';
import {
  type CreateWebhookBody,
  type CreatedWebhook,
  DEFAULT_DELIVERY_PAGE,
  type Delivery,
  type ListDeliveriesQuery,
  type ListWebhooksQuery,
  type UpdateWebhookBody,
  type Webhook,
} from './webhooks.schema.js';

export interface WebhookSettings {
  /** WEBHOOK_ALLOW_PRIVATE: internal destinations allowed. */
  allowPrivate: boolean;
  /** WEBHOOK_RETRY_SCALE: multiplies the retry delays (tests). */
  retryScale: number;
  /** WEBHOOK_DNS_SERVERS: the DNS servers destinations are resolved with (default: the system's). */
  dnsServers?: ResolveOptions['dnsServers'];
  /**
   * Sends on the event loop instead of a thread of its own (as an in-memory SQLite database
   * always does): the fast test suites, whose apps start and stop by the dozen. Not from the environment.
   */
  inline?: boolean;
  /** How long the idle fan-out and dispatcher rest before looking again unwoken (2 s); tests lengthen it to show the wakes. Not from the environment. */
  restMs?: number;
}

/** `whsec_` + base64 of 32 random bytes: the format Standard Webhooks libraries read. */
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

export type WebhooksService = ReturnType<typeof createWebhooksService>;

/** A user's webhooks. Built once per storage. */
export function createWebhooksService(storage: Storage, settings: WebhookSettings) {
  const repo = createWebhooksRepository(storage);
  const outbox = createOutbox(storage);
  const checks = checksOf(storage, settings, repo);
  return { ...registration(storage, repo, checks), ...upkeep(storage, repo, outbox, checks) };
}

/** The checks the operations share: the URL's, the cap and the owner's. */
function checksOf(storage: Storage, settings: WebhookSettings, repo: WebhooksRepository) {
  /** The URL checks of registration: its syntax, then (outside the request gate) where its host resolves. */
  async function checkUrl(url: string, aside: StepAside): Promise<void> {
    const malformed = refuseUrlSyntax(url);
    if (malformed !== undefined) throw validationFailed([{ path: '/url', message: malformed }]);
    const refused = await aside(() => refuseHost(url, settings.allowPrivate, settings));
    if (refused !== undefined) throw validationFailed([{ path: '/url', message: refused }]);
  }

  /** The user's webhook locked in `trx`, or 404. */
  async function lockOwn(trx: Db, user: AuthenticatedUser, id: number) {
    const row = await repo.lockOwn(trx, { userId: user.id, id });
    if (row === undefined) throw notFound('webhook');
    return row;
  }

  async function underCap(db: Db, user: AuthenticatedUser): Promise<void> {
    if ((await repo.countOf(db, user.id)) >= MAX_WEBHOOKS_PER_USER) throw conflict(`You already have ${MAX_WEBHOOKS_PER_USER} webhooks; delete one first.`);
  }

  async function own(user: AuthenticatedUser, id: number) {
    const row = await repo.find(storage.db, { userId: user.id, id });
    if (row === undefined) throw notFound('webhook');
    return row;
  }

  return { checkUrl, lockOwn, underCap, own };
}

type Checks = ReturnType<typeof checksOf>;

/**
 * In the transaction that writes a webhook, before the write: when none listens for time events,
 * the clock (which idles meanwhile, webhooks.clock.ts) starts at `now`, so a first listener
 * hears nothing from before it listened, as when the clock had run all along. Moving an idle
 * clock loses nothing, so this needs no look at what the write subscribes to.
 */
async function startRestingClock(repo: WebhooksRepository, trx: Db, now: string): Promise<void> {
  if (!(await repo.anyListensForTime(trx))) await repo.clockFrom(trx, now);
}

/** Registering, listing, reading and changing webhooks. */
function registration(storage: Storage, repo: WebhooksRepository, { checkUrl, lockOwn, underCap, own }: Checks) {
  return {
    async create(user: AuthenticatedUser, body: CreateWebhookBody, aside: StepAside = (work) => work()): Promise<CreatedWebhook> {
      const malformed = refuseUrlSyntax(body.url);
      if (malformed !== undefined) throw validationFailed([{ path: '/url', message: malformed }]);
      // The cap before the lookup: a user at the limit costs no DNS query (contract section 13).
      await underCap(storage.db, user);
      // The lookup waits outside the request gate: a silent DNS server holds no slot of the API.
      await checkUrl(body.url, aside);
      const secret = newSecret();
      const row = await storage.transaction(async (trx) => {
        // The user's row locked (PostgreSQL; SQLite's write transactions take turns): concurrent
        // creates count one after another, so the cap holds under a race.
        await lockUser(storage, trx, user.id);
        await underCap(trx, user);
        const now = new Date().toISOString();
        await startRestingClock(repo, trx, now);
        return repo.insert(trx, { userId: user.id, url: body.url, events: [...body.events], description: body.description ?? null, secret, now });
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

    /** Changes the given fields; turning it off ends its queued deliveries as failed (turning it on again does not revive them). */
    async update(user: AuthenticatedUser, id: number, body: UpdateWebhookBody, aside: StepAside = (work) => work()): Promise<Webhook> {
      // 404 before the lookup: another user's id costs no DNS query.
      await own(user, id);
      if (body.url !== undefined) await checkUrl(body.url, aside);
      const row = await storage.transaction(async (trx) => {
        const before = await lockOwn(trx, user, id);
        const now = new Date().toISOString();
        // Both ways: one enqueued by a fan-out racing the deactivation must not resume either.
        if (body.active !== undefined && body.active !== (before.active === 1)) await repo.failPending(trx, { webhookId: id, now });
        await startRestingClock(repo, trx, now);
        return repo.update(trx, id, {
          ...(body.url === undefined ? {} : { url: body.url }),
          ...(body.events === undefined ? {} : { events: body.events }),
          ...(body.description === undefined ? {} : { description: body.description }),
          ...(body.active === undefined ? {} : { active: body.active ? 1 : 0 }),
        });
      });
      return toWebhook(row);
    },
  };
}

/** Rotating the secret, testing, deleting and listing the deliveries. */
function upkeep(storage: Storage, repo: WebhooksRepository, outbox: Outbox, { lockOwn, own }: Checks) {
  return {
    /** A new secret; the replaced one keeps signing beside it for PREVIOUS_SECRET_MS (one rotated out before that stops at once). */
    async rotateSecret(user: AuthenticatedUser, id: number) {
      const secret = newSecret();
      const until = new Date(Date.now() + PREVIOUS_SECRET_MS).toISOString();
      await storage.transaction(async (trx) => {
        const before = await lockOwn(trx, user, id);
        await repo.update(trx, id, { secret, previous_secret: before.secret, previous_secret_until: until });
      });
      return { secret, previous_secret_expires_at: until };
    },

    /** Queues a `webhook.test` event, due now, for this webhook only; 409 when it is inactive. */
    async test(user: AuthenticatedUser, id: number): Promise<Delivery> {
      const row = await storage.transaction(async (trx) => {
        const hook = await lockOwn(trx, user, id);
        if (hook.active !== 1) throw conflict('This webhook is inactive; turn it on (PATCH active: true) to test it.');
        const now = new Date().toISOString();
        await outbox.enqueue(trx, [eventOf({ webhookId: id, type: TEST_EVENT, timestamp: now, data: { id: String(id) } })], now);
        return repo.latestDelivery(trx, id);
      });
      return toDelivery(row);
    },

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
