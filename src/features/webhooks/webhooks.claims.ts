import { sql } from 'kysely';
import type { Db, Storage } from '../../storage/database.js';
import { enabledAmong } from '../auth/auth.principals.js';
import { withheldDeliveries } from './webhooks.offboarding.js';

/**
 * Webhooks of one user sent to at once, over all instances (each two attempts at a time,
 * webhooks.dispatcher.ts): a user's silent receivers hold at most this many slots,
 * whatever their number or host (counted from the leases, so every instance agrees).
 */
export const WEBHOOKS_IN_FLIGHT_PER_USER = 4;
/** Deliveries one turn of a webhook takes (sent while its lease lasts). */
export const TURN_DELIVERIES = 32;

/** A webhook leased to this instance with its oldest due deliveries. */
export interface Turn {
  webhookId: number;
  userId: number;
  /** The lease, as written: released only if it is still this one. */
  leaseUntil: string;
  deliveries: { id: number; event_id: string; attempts: number; payload_id: number; body: string }[];
}

/** A webhook's destination and signing secrets right before an attempt (the new secret first, then one rotated out less than 24 h ago). */
export interface Live {
  url: string;
  secrets: string[];
}

/** A turn that is over: its lease ends at `at` (if it is still the one taken). */
export interface Release {
  webhookId: number;
  leaseUntil: string;
  at: string;
}

/** What an attempt came to, for `settle`. */
export type AttemptOutcome =
  | { id: number; kind: 'delivered'; status: number; at: string }
  | { id: number; kind: 'retry'; status: number | null; at: string; next: string }
  | { id: number; kind: 'failed'; status: number | null; at: string };

/**
 * Orders candidates fairly: users with the fewest webhooks in flight first, then round
 * robin (a user's next webhook only after every other user's); within a user, the webhook
 * served longest ago first (`servedAt`: when its last lease ended, '' if never). Returns at most `room`.
 */
export function fairPick<T extends { userId: number; servedAt: string }>(candidates: readonly T[], inFlight: ReadonlyMap<number, number>, room: number): T[] {
  const byUser = new Map<number, T[]>();
  for (const c of [...candidates].sort((a, b) => (a.servedAt < b.servedAt ? -1 : a.servedAt > b.servedAt ? 1 : 0))) {
    const list = byUser.get(c.userId);
    if (list === undefined) byUser.set(c.userId, [c]);
    else list.push(c);
  }
  const busy = new Map(inFlight);
  const picked: T[] = [];
  const users = [...byUser.keys()].sort((a, b) => (busy.get(a) ?? 0) - (busy.get(b) ?? 0));
  for (let round = 0; picked.length < room; round++) {
    let any = false;
    for (const user of users) {
      const next = byUser.get(user)?.[round];
      if (next === undefined || (busy.get(user) ?? 0) >= WEBHOOKS_IN_FLIGHT_PER_USER || picked.length >= room) continue;
      busy.set(user, (busy.get(user) ?? 0) + 1);
      picked.push(next);
      any = true;
    }
    if (!any) break;
  }
  return picked;
}

export type Claims = ReturnType<typeof createClaims>;

/**
 * The dispatcher's side of the outbox. A webhook is sent to by one instance at a time,
 * under a lease on its row (webhooks.claimed_until) taken with SKIP LOCKED on PostgreSQL,
 * so instances share the queue; a lapsed lease (a crash) lets another instance send what
 * was not recorded, at least once. Built once per storage.
 */
export function createClaims(storage: Storage) {
  const chunk = Math.max(1, Math.floor(storage.maxParameters / 8));
  return {
    /** Leases up to `room` webhooks with due deliveries, chosen fairly (fairPick), each with its oldest due deliveries. */
    claim(q: { now: string; leaseUntil: string; room: number }): Promise<Turn[]> {
      return storage.transaction(async (trx) => {
        const picked = await pickWebhooks(storage, trx, q);
        if (picked.length === 0) return [];
        await trx.updateTable('webhooks').set({ claimed_until: q.leaseUntil }).where('id', 'in', picked.map((w) => w.id)).execute();
        const turns = picked.map((w): Turn => ({ webhookId: w.id, userId: Number(w.user_id), leaseUntil: q.leaseUntil, deliveries: [] }));
        await fillTurns(trx, turns, q.now, chunk);
        return turns;
      });
    },

    /**
     * Continues a turn whose deliveries were all sent (and recorded): the lease is renewed
     * if it is still this one, and the turn takes the webhook's next due deliveries. False
     * when the lease was lost. A busy webhook keeps its slot without waiting for a claim;
     * others have slots of their own.
     */
    renew(turn: Turn, q: { now: string; leaseUntil: string }): Promise<boolean> {
      return storage.transaction(async (trx) => {
        const renewed = await trx
          .updateTable('webhooks')
          .set({ claimed_until: q.leaseUntil })
          .where('id', '=', turn.webhookId)
          .where('claimed_until', '=', turn.leaseUntil)
          .executeTakeFirst();
        if (Number(renewed.numUpdatedRows) === 0) return false;
        turn.leaseUntil = q.leaseUntil;
        await fillTurns(trx, [turn], q.now, chunk);
        return true;
      });
    },

    /**
     * Where and with which secrets to send now, or undefined when the webhook was deleted or
     * turned off or its owner disabled: read right before each attempt, so such a webhook is
     * sent nothing more, and an edited URL or a rotated secret applies at once.
     */
    async alive(webhookId: number, now: string): Promise<Live | undefined> {
      const row = await storage.db
        .selectFrom('webhooks')
        .select(['user_id', 'url', 'secret', 'previous_secret', 'previous_secret_until'])
        .where('id', '=', webhookId)
        .where('active', '=', 1)
        .executeTakeFirst();
      if (row === undefined || !(await enabledAmong(storage.db, [row.user_id])).has(row.user_id)) return undefined;
      const previous = row.previous_secret !== null && row.previous_secret_until !== null && row.previous_secret_until > now ? [row.previous_secret] : [];
      return { url: row.url, secrets: [row.secret, ...previous] };
    },

    /** Records what attempts came to, then ends the leases of turns that are over, in one transaction. */
    settle(outcomes: readonly AttemptOutcome[], released: readonly Release[]): Promise<void> {
      if (outcomes.length === 0 && released.length === 0) return Promise.resolve();
      return storage.transaction(async (trx) => {
        await recordOutcomes(trx, outcomes, released, chunk);
      });
    },
  };
}

/** The webhooks with due deliveries and no live lease, locked (SKIP LOCKED), of which up to `room` are chosen fairly (fairPick). */
async function pickWebhooks(storage: Storage, trx: Db, q: { now: string; room: number }) {
  const free = await storage
    .forUpdateSkipLocked(
      trx
        .selectFrom('webhooks as w')
        .select(['w.id', 'w.user_id', 'w.claimed_until'])
        .where((eb) => eb.or([eb('w.claimed_until', 'is', null), eb('w.claimed_until', '<=', q.now)]))
        .where('w.active', '=', 1)
        .where((eb) =>
          eb.exists(
            eb
              .selectFrom('webhook_deliveries as d')
              .select(sql`1`.as('one'))
              .whereRef('d.webhook_id', '=', 'w.id')
              .where('d.next_attempt_at', 'is not', null)
              .where('d.next_attempt_at', '<=', q.now),
          ),
        ),
    )
    .execute();
  if (free.length === 0) return [];
  const busy = await trx
    .selectFrom('webhooks')
    .select(['user_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('claimed_until', '>', q.now)
    .groupBy('user_id')
    .execute();
  const inFlight = new Map(busy.map((b) => [Number(b.user_id), Number(b.n)]));
  return fairPick(
    free.map((w) => ({ ...w, userId: Number(w.user_id), servedAt: w.claimed_until ?? '' })),
    inFlight,
    q.room,
  );
}

/** Gives each turn its webhook's oldest due deliveries, each payload read once (many webhooks get one event). */
async function fillTurns(trx: Db, turns: Turn[], now: string, chunk: number): Promise<void> {
  const wanted = new Set<number>();
  for (const turn of turns) {
    turn.deliveries = (
      await trx
        .selectFrom('webhook_deliveries')
        .select(['id', 'event_id', 'attempts', 'payload_id'])
        .where('webhook_id', '=', turn.webhookId)
        .where('next_attempt_at', 'is not', null)
        .where('next_attempt_at', '<=', now)
        .orderBy('next_attempt_at')
        .orderBy('id')
        .limit(TURN_DELIVERIES)
        .execute()
    ).map((d) => ({ ...d, body: '' }));
    for (const d of turn.deliveries) wanted.add(Number(d.payload_id));
  }
  const bodies = new Map<number, string>();
  const ids = [...wanted];
  for (let i = 0; i < ids.length; i += chunk) {
    for (const p of await trx.selectFrom('webhook_payloads').select(['id', 'body']).where('id', 'in', ids.slice(i, i + chunk)).execute()) bodies.set(Number(p.id), p.body);
  }
  for (const turn of turns) for (const d of turn.deliveries) d.body = bodies.get(Number(d.payload_id)) ?? '';
  // An off-boarded owner's (disabled, or no longer in the session's org) are dropped, never sent.
  const withheld = await withheldDeliveries(trx, turns.flatMap((t) => t.deliveries.map((d) => ({ id: d.id, user_id: t.userId, payload: d.body }))));
  if (withheld.size === 0) return;
  const dropped = [...withheld];
  for (let i = 0; i < dropped.length; i += chunk) await trx.deleteFrom('webhook_deliveries').where('id', 'in', dropped.slice(i, i + chunk)).execute();
  for (const turn of turns) turn.deliveries = turn.deliveries.filter((d) => !withheld.has(d.id));
}

/** Records what attempts came to, then ends the leases of turns that are over. */
async function recordOutcomes(trx: Db, outcomes: readonly AttemptOutcome[], released: readonly Release[], chunk: number): Promise<void> {
  // The common outcome in one statement per status (the batch's first instant): few statements per batch.
  const delivered = new Map<number, { ids: number[]; at: string }>();
  for (const o of outcomes) {
    if (o.kind !== 'delivered') continue;
    const group = delivered.get(o.status) ?? { ids: [], at: o.at };
    delivered.set(o.status, group);
    group.ids.push(o.id);
  }
  for (const [status, group] of delivered) {
    for (let i = 0; i < group.ids.length; i += chunk) {
      await trx
        .updateTable('webhook_deliveries')
        .set({ attempts: sql<number>`attempts + 1`, last_status: status, delivered_at: group.at, next_attempt_at: null })
        .where('id', 'in', group.ids.slice(i, i + chunk))
        .execute();
    }
  }
  for (const o of outcomes) {
    if (o.kind === 'delivered') continue;
    const attempted = { attempts: sql<number>`attempts + 1`, last_status: o.status };
    const row = trx.updateTable('webhook_deliveries').where('id', '=', o.id);
    if (o.kind === 'failed') await row.set({ ...attempted, failed_at: o.at, next_attempt_at: null }).execute();
    // Not rescheduled if it was ended meanwhile (its webhook turned off during the attempt).
      else await row.set({ ...attempted, next_attempt_at: o.next }).where('failed_at', 'is', null).execute();
  }
  for (const r of released) {
    // The lease ends at once; the instant it ended tells the next claim which webhook waited longest.
    await trx.updateTable('webhooks').set({ claimed_until: r.at }).where('id', '=', r.webhookId).where('claimed_until', '=', r.leaseUntil).execute();
  }
}
