import type { Db, Storage } from '../../storage/database.js';
import { MAX_WEBHOOKS_PER_USER } from './webhooks.events.js';
import { type OutgoingEvent, newEventId } from './webhooks.payload.js';

/**
 * Deliveries a user keeps stored, pending or settled, over all of their webhooks: the
 * quota is per webhook (this divided by MAX_WEBHOOKS_PER_USER), so that it holds without
 * counting across webhooks. Past it, the webhook's oldest settled deliveries are removed
 * first, then its oldest pending ones: those fail by being dropped (they are no longer
 * listed nor sent). What one user's events cost in storage is bounded whatever they import.
 */
export const DELIVERY_QUOTA_PER_USER = 5_000;
export const DELIVERY_QUOTA_PER_WEBHOOK = DELIVERY_QUOTA_PER_USER / MAX_WEBHOOKS_PER_USER;

export type Outbox = ReturnType<typeof createOutbox>;

/** Writes events to the outbox: one payload row per distinct body, shared by its deliveries. Built once per storage. */
export function createOutbox(storage: Storage) {
  const chunk = Math.max(1, Math.floor(storage.maxParameters / 8));

  /** The ids of the inserted payloads, in the order given. */
  async function insertPayloads(db: Db, rows: readonly { type: string; occurred_at: string; body: string; created_at: string }[]): Promise<number[]> {
    const ids: number[] = [];
    for (let i = 0; i < rows.length; i += chunk) {
      const part = rows.slice(i, i + chunk);
      // A multi-row INSERT … RETURNING answers its rows in VALUES order on both databases.
      const returned = await db.insertInto('webhook_payloads').values(part).returning('id').execute();
      if (returned.length !== part.length) throw new Error('payload insert returned another number of rows');
      ids.push(...returned.map((r) => Number(r.id)));
    }
    return ids;
  }

  /** Drops what the quota leaves no room for: the oldest settled deliveries first, then the oldest pending. */
  async function enforceQuota(db: Db, webhookIds: readonly number[]): Promise<void> {
    if (webhookIds.length === 0) return;
    const over: { webhookId: number; excess: number }[] = [];
    for (let i = 0; i < webhookIds.length; i += chunk) {
      const counts = await db
        .selectFrom('webhook_deliveries')
        .select(['webhook_id', (eb) => eb.fn.countAll<number>().as('n')])
        .where('webhook_id', 'in', webhookIds.slice(i, i + chunk))
        .groupBy('webhook_id')
        .execute();
      for (const c of counts) if (Number(c.n) > DELIVERY_QUOTA_PER_WEBHOOK) over.push({ webhookId: Number(c.webhook_id), excess: Number(c.n) - DELIVERY_QUOTA_PER_WEBHOOK });
    }
    const payloadIds = new Set<number>();
    for (const { webhookId, excess } of over) {
      const oldest = (settled: boolean, limit: number) =>
        db
          .selectFrom('webhook_deliveries')
          .select(['id', 'payload_id'])
          .where('webhook_id', '=', webhookId)
          .where('next_attempt_at', settled ? 'is' : 'is not', null)
          .orderBy('id')
          .limit(limit)
          .execute();
      const doomed = await oldest(true, excess);
      if (doomed.length < excess) doomed.push(...(await oldest(false, excess - doomed.length)));
      for (let i = 0; i < doomed.length; i += chunk) {
        await db.deleteFrom('webhook_deliveries').where('id', 'in', doomed.slice(i, i + chunk).map((d) => d.id)).execute();
      }
      for (const d of doomed) payloadIds.add(Number(d.payload_id));
    }
    await dropOrphanPayloads(db, [...payloadIds]);
  }

  /** Removes those of these payloads no delivery refers to any more. */
  async function dropOrphanPayloads(db: Db, ids: readonly number[]): Promise<void> {
    for (let i = 0; i < ids.length; i += chunk) {
      await db
        .deleteFrom('webhook_payloads')
        .where('id', 'in', ids.slice(i, i + chunk))
        .where((eb) => eb.not(eb.exists(eb.selectFrom('webhook_deliveries').select('webhook_deliveries.id').whereRef('webhook_deliveries.payload_id', '=', 'webhook_payloads.id'))))
        .execute();
    }
  }

  return {
    /** Stores the events, due at `now`, in the caller's transaction; then holds every webhook concerned to its quota. */
    async enqueue(db: Db, events: readonly OutgoingEvent[], now: string): Promise<void> {
      if (events.length === 0) return;
      // Webhooks that are told the same thing at once (same type, instant and bytes) share a payload.
      const groups = new Map<string, OutgoingEvent[]>();
      for (const e of events) {
        const key = `${e.type}\u0000${e.occurredAt}\u0000${e.body}`;
        const group = groups.get(key);
        if (group === undefined) groups.set(key, [e]);
        else group.push(e);
      }
      const distinct = [...groups.values()];
      const ids = await insertPayloads(
        db,
        distinct.map((g) => ({ type: (g[0] as OutgoingEvent).type, occurred_at: (g[0] as OutgoingEvent).occurredAt, body: (g[0] as OutgoingEvent).body, created_at: now })),
      );
      const rows = distinct.flatMap((group, i) =>
        group.map((e) => ({ webhook_id: e.webhookId, payload_id: ids[i] as number, event_id: newEventId(), attempts: 0, next_attempt_at: now })),
      );
      for (let i = 0; i < rows.length; i += chunk) await db.insertInto('webhook_deliveries').values(rows.slice(i, i + chunk)).execute();
      await enforceQuota(db, [...new Set(events.map((e) => e.webhookId))]);
    },

    dropOrphanPayloads,
  };
}
