import { type Updateable, sql } from 'kysely';
import { toJson } from '../../storage/columns.js';
import type { Db, Storage } from '../../storage/database.js';
import type { WebhookRow, WebhooksTable } from '../../storage/tables.js';
import { listensForTime } from './webhooks.events.js';

export type WebhooksRepository = ReturnType<typeof createWebhooksRepository>;

/** A webhook's events as stored: the JSON text and, beside it, whether one is time-triggered (migration 0035). */
const eventColumns = (events: readonly string[]) => ({ events: toJson([...events]), time_events: listensForTime(events) ? (1 as const) : (0 as const) });

/** Webhooks, their deliveries and the jobs' state. Built once per storage. */
export function createWebhooksRepository(storage: Storage) {
  return { ...webhookStatements(storage), ...removalAndDeliveryStatements(storage), ...subscriberStatements(), ...stateStatements(storage) };
}

/** A user's webhook rows, and the delivery a test just queued. */
function webhookStatements(storage: Storage) {
  return {
    async countOf(db: Db, userId: number): Promise<number> {
      const row = await db.selectFrom('webhooks').select((eb) => eb.fn.countAll().as('n')).where('user_id', '=', userId).executeTakeFirst();
      return Number(row?.n ?? 0);
    },

    async insert(db: Db, q: { userId: number; url: string; events: string[]; description: string | null; secret: string; now: string }): Promise<WebhookRow> {
      return db
        .insertInto('webhooks')
        .values({ user_id: q.userId, url: q.url, ...eventColumns(q.events), description: q.description, secret: q.secret, created_at: q.now })
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    find(db: Db, q: { userId: number; id: number }): Promise<WebhookRow | undefined> {
      return db.selectFrom('webhooks').selectAll().where('id', '=', q.id).where('user_id', '=', q.userId).executeTakeFirst();
    },

    /** The user's webhook locked until the transaction ends (PostgreSQL; SQLite's writers take turns). */
    lockOwn(db: Db, q: { userId: number; id: number }): Promise<WebhookRow | undefined> {
      return storage.forUpdate(db.selectFrom('webhooks').selectAll().where('id', '=', q.id).where('user_id', '=', q.userId)).executeTakeFirst();
    },

    /** Changes the given columns; new `events` are stored with their `time_events` flag, as insert does. */
    async update(db: Db, id: number, set: Omit<Updateable<WebhooksTable>, 'events' | 'time_events'> & { events?: readonly string[] }): Promise<WebhookRow> {
      const { events, ...columns } = set;
      return db
        .updateTable('webhooks')
        .set({ ...columns, ...(events === undefined ? {} : eventColumns(events)) })
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    /** Ends the webhook's pending deliveries as failed at `now`: an inactive webhook is sent nothing queued. */
    async failPending(db: Db, q: { webhookId: number; now: string }): Promise<void> {
      await db.updateTable('webhook_deliveries').set({ failed_at: q.now, next_attempt_at: null }).where('webhook_id', '=', q.webhookId).where('next_attempt_at', 'is not', null).execute();
    },

    /** The webhook's latest delivery (the one just enqueued, in the caller's transaction). */
    latestDelivery(db: Db, webhookId: number) {
      return db
        .selectFrom('webhook_deliveries as d')
        .innerJoin('webhook_payloads as p', 'p.id', 'd.payload_id')
        .select(['d.id', 'd.event_id', 'p.type', 'p.occurred_at', 'd.attempts', 'd.next_attempt_at', 'd.last_status', 'd.delivered_at', 'd.failed_at'])
        .where('d.webhook_id', '=', webhookId)
        .orderBy('d.id', 'desc')
        .executeTakeFirstOrThrow();
    },

    list(q: { userId: number; afterId?: number; limit: number }): Promise<WebhookRow[]> {
      let query = storage.db.selectFrom('webhooks').selectAll().where('user_id', '=', q.userId);
      if (q.afterId !== undefined) query = query.where('id', '>', q.afterId);
      return query.orderBy('id').limit(q.limit).execute();
    },
  };
}

/** Removing a webhook with what it queued, and listing its deliveries. */
function removalAndDeliveryStatements(storage: Storage) {
  return {
    async remove(db: Db, q: { userId: number; id: number }): Promise<boolean> {
      // The outbox goes with it: nothing is sent to a webhook that no longer exists.
      await db.deleteFrom('webhook_triggers').where('webhook_id', 'in', db.selectFrom('webhooks').select('id').where('id', '=', q.id).where('user_id', '=', q.userId)).execute();
      const mine = db.selectFrom('webhooks').select('id').where('id', '=', q.id).where('user_id', '=', q.userId);
      const payloads = (await db.selectFrom('webhook_deliveries').select('payload_id').distinct().where('webhook_id', 'in', mine).execute()).map((r) => r.payload_id);
      await db.deleteFrom('webhook_deliveries').where('webhook_id', 'in', mine).execute();
      // Its payloads go too, unless another webhook's deliveries share them.
      for (let i = 0; i < payloads.length; i += 500) {
        await db
          .deleteFrom('webhook_payloads')
          .where('id', 'in', payloads.slice(i, i + 500))
          .where((eb) => eb.not(eb.exists(eb.selectFrom('webhook_deliveries').select('webhook_deliveries.id').whereRef('webhook_deliveries.payload_id', '=', 'webhook_payloads.id'))))
          .execute();
      }
      const result = await db.deleteFrom('webhooks').where('id', '=', q.id).where('user_id', '=', q.userId).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    deliveries(q: { webhookId: number; beforeId?: number; limit: number }) {
      let query = storage.db
        .selectFrom('webhook_deliveries as d')
        .innerJoin('webhook_payloads as p', 'p.id', 'd.payload_id')
        .select(['d.id', 'd.event_id', 'p.type', 'p.occurred_at', 'd.attempts', 'd.next_attempt_at', 'd.last_status', 'd.delivered_at', 'd.failed_at'])
        .where('d.webhook_id', '=', q.webhookId);
      if (q.beforeId !== undefined) query = query.where('d.id', '<', q.beforeId);
      return query.orderBy('d.id', 'desc').limit(q.limit).execute();
    },
  };
}

/** Who the fan-out sends an event to. */
function subscriberStatements() {
  return {
    /** Every active webhook of these users (whether a user is disabled is auth's to say: principalsOf). */
    hooksOf(db: Db, userIds: readonly number[]) {
      if (userIds.length === 0) return Promise.resolve([]);
      return db
        .selectFrom('webhooks')
        .select(['webhooks.id', 'webhooks.user_id', 'webhooks.events'])
        .where('webhooks.user_id', 'in', userIds)
        .where('webhooks.active', '=', 1)
        .orderBy('webhooks.id')
        .execute();
    },

    /**
     * Users with a webhook among the members of these orgs, and these users themselves. The
     * one read of auth's memberships here: a semijoin with webhooks in one statement, where
     * asking auth for the orgs' members first would read every member of every org.
     */
    async subscribersAmong(db: Db, q: { orgIds: readonly number[]; userIds: readonly number[] }): Promise<number[]> {
      const ids = new Set<number>();
      if (q.orgIds.length > 0) {
        const rows = await db
          .selectFrom('memberships')
          .select('memberships.user_id')
          .distinct()
          .where('memberships.org_id', 'in', q.orgIds)
          .where((eb) => eb.exists(eb.selectFrom('webhooks').select(sql`1`.as('one')).whereRef('webhooks.user_id', '=', 'memberships.user_id')))
          .execute();
        for (const r of rows) ids.add(r.user_id);
      }
      for (const id of q.userIds) ids.add(id);
      return [...ids];
    },
  };
}

/** The jobs' state rows, trigger marks and the purge of old deliveries. */
function stateStatements(storage: Storage) {
  return {
    /** The state row `name`, locked until the transaction ends. */
    lockState(db: Db, name: 'fanout' | 'clock') {
      return storage.forUpdate(db.selectFrom('webhook_state').selectAll().where('name', '=', name)).executeTakeFirst();
    },

    readState(db: Db, name: 'fanout' | 'clock') {
      return db.selectFrom('webhook_state').selectAll().where('name', '=', name).executeTakeFirst();
    },

    async writeState(db: Db, name: 'fanout' | 'clock', values: { position?: number; instant?: string }): Promise<void> {
      await db.updateTable('webhook_state').set(values).where('name', '=', name).execute();
    },

    /** Whether an active webhook subscribes to a time-triggered event: one entry of an index of those (migration 0035). */
    async anyListensForTime(db: Db): Promise<boolean> {
      const row = await db.selectFrom('webhooks').select('id').where('active', '=', 1).where('time_events', '=', 1).limit(1).executeTakeFirst();
      return row !== undefined;
    },

    /** Moves the clock's last checked instant up to `now` (never back): the clock raises nothing from before it. */
    async clockFrom(db: Db, now: string): Promise<void> {
      await db
        .updateTable('webhook_state')
        .set({ instant: now })
        .where('name', '=', 'clock')
        .where((eb) => eb.or([eb('instant', 'is', null), eb('instant', '<', now)]))
        .execute();
    },

    /** Marks time-triggered events enqueued; returns the keys that were new (the others were enqueued before, maybe elsewhere). */
    async markTriggers<T extends { webhook_id: number; session_id: number; occurrence_date: string; type: string; fires_at: string }>(db: Db, rows: readonly T[]): Promise<T[]> {
      const fresh: T[] = [];
      for (const row of rows) {
        const result = await db.insertInto('webhook_triggers').values(row).onConflict((oc) => oc.doNothing()).executeTakeFirst();
        if (Number(result.numInsertedOrUpdatedRows ?? 0) > 0) fresh.push(row);
      }
      return fresh;
    },

    /** Deletes up to `limit` settled deliveries, payloads and trigger marks older than `before`. */
    async purge(q: { before: string; limit: number }): Promise<number> {
      const old = storage.db.selectFrom('webhook_payloads').select('id').where('created_at', '<', q.before).orderBy('created_at').limit(q.limit);
      const a = await storage.db.deleteFrom('webhook_deliveries').where('payload_id', 'in', old).where('next_attempt_at', 'is', null).executeTakeFirst();
      const orphans = storage.db
        .selectFrom('webhook_payloads')
        .select('id')
        .where('created_at', '<', q.before)
        .where((eb) => eb.not(eb.exists(eb.selectFrom('webhook_deliveries').select('webhook_deliveries.id').whereRef('webhook_deliveries.payload_id', '=', 'webhook_payloads.id'))))
        .orderBy('created_at')
        .limit(q.limit);
      const b = await storage.db.deleteFrom('webhook_payloads').where('id', 'in', orphans).executeTakeFirst();
      const c = await storage.db.deleteFrom('webhook_triggers').where('fires_at', '<', q.before).executeTakeFirst();
      return Number(a.numDeletedRows) + Number(b.numDeletedRows) + Number(c.numDeletedRows);
    },
  };
}
