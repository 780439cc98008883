import { sql } from 'kysely';
import { toJson } from '../../storage/columns.js';
import type { Db, Storage } from '../../storage/database.js';
import type { NewWebhookDelivery, WebhookDeliveryRow, WebhookRow } from '../../storage/tables.js';
import { withheldDeliveries } from './webhooks.offboarding.js';

export type WebhooksRepository = ReturnType<typeof createWebhooksRepository>;

/** A delivery claimed for sending, with what sending needs of its webhook. */
export type ClaimedDelivery = Pick<WebhookDeliveryRow, 'id' | 'event_id' | 'payload' | 'attempts'> & { url: string; secret: string };

/** What an attempt came to, for `settle`. */
export type AttemptOutcome =
  | { id: number; kind: 'delivered'; status: number; at: string }
  | { id: number; kind: 'retry'; status: number | null; at: string; next: string }
  | { id: number; kind: 'failed'; status: number | null; at: string }
  /** Not attempted after all (shutdown): back to the queue as it was. */
  | { id: number; kind: 'released' };

/** Webhooks, their deliveries and the jobs' state. Built once per storage. */
export function createWebhooksRepository(storage: Storage) {
  const chunk = Math.max(1, Math.floor(storage.maxParameters / 16));
  return {
    async countOf(db: Db, userId: number): Promise<number> {
      const row = await db.selectFrom('webhooks').select((eb) => eb.fn.countAll().as('n')).where('user_id', '=', userId).executeTakeFirst();
      return Number(row?.n ?? 0);
    },

    async insert(db: Db, q: { userId: number; url: string; events: string[]; description: string | null; secret: string; now: string }): Promise<WebhookRow> {
      return db
        .insertInto('webhooks')
        .values({ user_id: q.userId, url: q.url, events: toJson(q.events), description: q.description, secret: q.secret, created_at: q.now })
        .returningAll()
        .executeTakeFirstOrThrow();
    },

    find(db: Db, q: { userId: number; id: number }): Promise<WebhookRow | undefined> {
      return db.selectFrom('webhooks').selectAll().where('id', '=', q.id).where('user_id', '=', q.userId).executeTakeFirst();
    },

    list(q: { userId: number; afterId?: number; limit: number }): Promise<WebhookRow[]> {
      let query = storage.db.selectFrom('webhooks').selectAll().where('user_id', '=', q.userId);
      if (q.afterId !== undefined) query = query.where('id', '>', q.afterId);
      return query.orderBy('id').limit(q.limit).execute();
    },

    async remove(db: Db, q: { userId: number; id: number }): Promise<boolean> {
      // The outbox goes with it: nothing is sent to a webhook that no longer exists.
      await db.deleteFrom('webhook_triggers').where('webhook_id', 'in', db.selectFrom('webhooks').select('id').where('id', '=', q.id).where('user_id', '=', q.userId)).execute();
      await db.deleteFrom('webhook_deliveries').where('webhook_id', 'in', db.selectFrom('webhooks').select('id').where('id', '=', q.id).where('user_id', '=', q.userId)).execute();
      const result = await db.deleteFrom('webhooks').where('id', '=', q.id).where('user_id', '=', q.userId).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    deliveries(q: { webhookId: number; beforeId?: number; limit: number }) {
      let query = storage.db
        .selectFrom('webhook_deliveries')
        .select(['id', 'webhook_id', 'event_id', 'type', 'occurred_at', 'attempts', 'next_attempt_at', 'claimed_until', 'last_status', 'delivered_at', 'failed_at', 'created_at'])
        .where('webhook_id', '=', q.webhookId);
      if (q.beforeId !== undefined) query = query.where('id', '<', q.beforeId);
      return query.orderBy('id', 'desc').limit(q.limit).execute();
    },

    /** Every webhook of these users, with the user's handle and time zone; a disabled user's none. */
    hooksOf(db: Db, userIds: readonly number[]) {
      if (userIds.length === 0) return Promise.resolve([]);
      return db
        .selectFrom('webhooks')
        .innerJoin('users', 'users.id', 'webhooks.user_id')
        .select(['webhooks.id', 'webhooks.user_id', 'webhooks.events', 'users.handle', 'users.timezone'])
        .where('webhooks.user_id', 'in', userIds)
        .where('users.disabled_at', 'is', null)
        .orderBy('webhooks.id')
        .execute();
    },

    /** Users with a webhook among the members of these orgs, and these users themselves. */
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

    async orgIdsOf(db: Db, userIds: readonly number[]): Promise<Map<number, number[]>> {
      const byUser = new Map<number, number[]>(userIds.map((id) => [id, []]));
      if (userIds.length === 0) return byUser;
      const rows = await db.selectFrom('memberships').select(['user_id', 'org_id']).where('user_id', 'in', userIds).orderBy('org_id').execute();
      for (const r of rows) byUser.get(r.user_id)?.push(r.org_id);
      return byUser;
    },

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

    async enqueue(db: Db, rows: readonly NewWebhookDelivery[]): Promise<void> {
      for (let i = 0; i < rows.length; i += chunk) await db.insertInto('webhook_deliveries').values(rows.slice(i, i + chunk)).execute();
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

    /**
     * Claims up to `limit` due deliveries for `leaseUntil`: on PostgreSQL rows another
     * instance is claiming are skipped, not waited for, so instances share the queue and no
     * delivery is claimed twice while its lease runs.
     */
    claim(q: { now: string; leaseUntil: string; limit: number }): Promise<ClaimedDelivery[]> {
      return storage.transaction(async (trx) => {
        const due = await storage
          .forUpdateSkipLocked(
            trx
              .selectFrom('webhook_deliveries')
              .select('id')
              .where('next_attempt_at', 'is not', null)
              .where('next_attempt_at', '<=', q.now)
              .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', q.now)]))
              .orderBy('next_attempt_at')
              .limit(q.limit),
          )
          .execute();
        if (due.length === 0) return [];
        const ids = due.map((r) => r.id);
        await trx.updateTable('webhook_deliveries').set({ claimed_until: q.leaseUntil }).where('id', 'in', ids).execute();
        const claimed = await trx
          .selectFrom('webhook_deliveries')
          .innerJoin('webhooks', 'webhooks.id', 'webhook_deliveries.webhook_id')
          .select(['webhook_deliveries.id', 'webhook_deliveries.event_id', 'webhook_deliveries.payload', 'webhook_deliveries.attempts', 'webhooks.url', 'webhooks.secret', 'webhooks.user_id'])
          .where('webhook_deliveries.id', 'in', ids)
          .orderBy('webhook_deliveries.next_attempt_at')
          .execute();
        // An off-boarded owner's (disabled, or no longer in the session's org) are dropped, never sent.
        const withheld = await withheldDeliveries(trx, claimed);
        if (withheld.size > 0) await trx.deleteFrom('webhook_deliveries').where('id', 'in', [...withheld]).execute();
        return claimed.filter((d) => !withheld.has(d.id)).map(({ user_id: _owner, ...d }) => d);
      });
    },

    /** Records what attempts came to, in one transaction. */
    settle(outcomes: readonly AttemptOutcome[]): Promise<void> {
      if (outcomes.length === 0) return Promise.resolve();
      return storage.transaction(async (trx) => {
        // The common outcomes in one statement per status: few statements per batch.
        const delivered = new Map<number, { ids: number[]; at: string }>();
        const released: number[] = [];
        for (const o of outcomes) {
          if (o.kind === 'released') released.push(o.id);
          else if (o.kind === 'delivered') {
            const group = delivered.get(o.status) ?? { ids: [], at: o.at };
            group.ids.push(o.id);
            delivered.set(o.status, group);
          }
        }
        for (const [status, group] of delivered) {
          for (let i = 0; i < group.ids.length; i += chunk) {
            await trx
              .updateTable('webhook_deliveries')
              .set({ attempts: sql<number>`attempts + 1`, last_status: status, claimed_until: null, delivered_at: group.at, next_attempt_at: null })
              .where('id', 'in', group.ids.slice(i, i + chunk))
              .execute();
          }
        }
        for (let i = 0; i < released.length; i += chunk) {
          await trx.updateTable('webhook_deliveries').set({ claimed_until: null }).where('id', 'in', released.slice(i, i + chunk)).execute();
        }
        for (const o of outcomes) {
          if (o.kind === 'released' || o.kind === 'delivered') continue;
          const row = trx.updateTable('webhook_deliveries').where('id', '=', o.id);
          {
            const attempted = { attempts: sql<number>`attempts + 1`, last_status: o.status, claimed_until: null };
            if (o.kind === 'failed') await row.set({ ...attempted, failed_at: o.at, next_attempt_at: null }).execute();
            else await row.set({ ...attempted, next_attempt_at: o.next }).execute();
          }
        }
      });
    },

    /** Deletes up to `limit` deliveries and trigger marks older than `before`. */
    async purge(q: { before: string; limit: number }): Promise<number> {
      const oldDeliveries = storage.db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('created_at', '<', q.before)
        .where('next_attempt_at', 'is', null)
        .orderBy('created_at')
        .limit(q.limit);
      const a = await storage.db.deleteFrom('webhook_deliveries').where('id', 'in', oldDeliveries).executeTakeFirst();
      const b = await storage.db.deleteFrom('webhook_triggers').where('fires_at', '<', q.before).executeTakeFirst();
      return Number(a.numDeletedRows) + Number(b.numDeletedRows);
    },
  };
}
