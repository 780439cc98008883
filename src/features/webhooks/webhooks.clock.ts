import { sql } from 'kysely';
import { type JsonText, parseJson } from '../../storage/columns.js';
import type { Storage } from '../../storage/database.js';
import { ApiError } from '../../toolkit/errors.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import type { SessionsService } from '../sessions/sessions.service.js';
import { STARTING_LEAD_MS, type TimeEvent } from './webhooks.events.js';
import { createOutbox } from './webhooks.outbox.js';
import { eventOf } from './webhooks.payload.js';
import { createWebhooksRepository } from './webhooks.repository.js';

/** Missed instants older than this are not raised late (contract section 9). */
export const CLOCK_CATCH_UP_MS = 86_400_000;
/** One step checks at most this much time: a long catch-up runs as many bounded steps. */
const CLOCK_SLICE_MS = 60_000;

type Window = { from: string; to: string };
type Hit = { session_id: number; occurrence_date: string; org_id: number; starts_at: string; ends_at: string; webhook_id: number; user_id: number; events: JsonText<string[]> };

/**
 * Time-triggered events from the occurrence index (never by expanding series): each step
 * takes the window (last checked instant, now] and enqueues `session.starting` (5 minutes
 * before an occurrence starts), `session.started` and `session.ended` for the webhooks of
 * users who created, collaborate on or joined the session and are members of its org.
 * The last checked instant is kept in the database, so that after every instance was down
 * the events missed (up to 24 h) are raised late with their own instants; each event is
 * enqueued once per webhook and occurrence, whichever instance sees it (webhook_triggers).
 */
export function createClock(storage: Storage, sessions: SessionsService) {
  const repo = createWebhooksRepository(storage);
  const outbox = createOutbox(storage);

  /** Occurrences of subscribers' sessions whose `column` (shifted by `leadMs`) falls in the window. */
  function hits(column: 'starts_at' | 'ends_at', window: Window, leadMs: number): Promise<Hit[]> {
    const shift = (iso: string) => new Date(Date.parse(iso) + leadMs).toISOString();
    return storage.db
      .selectFrom('session_occurrences as o')
      .innerJoin('webhooks as w', (join) =>
        join.on((eb) =>
          eb.or([
            eb('o.created_by', '=', eb.ref('w.user_id')),
            eb.exists(eb.selectFrom('session_collaborators as sc').select(sql`1`.as('one')).whereRef('sc.session_id', '=', 'o.session_id').whereRef('sc.user_id', '=', 'w.user_id')),
            eb.exists(
              eb
                .selectFrom('session_participants as sp')
                .select(sql`1`.as('one'))
                .whereRef('sp.session_id', '=', 'o.session_id')
                .whereRef('sp.user_id', '=', 'w.user_id')
                .where((e) => e.or([e('sp.occurrence_date', '=', e.ref('o.occurrence_date')), e('sp.occurrence_date', '=', '')])),
            ),
          ]),
        ),
      )
      .select(['o.session_id', 'o.occurrence_date', 'o.org_id', 'o.starts_at', 'o.ends_at', 'w.id as webhook_id', 'w.user_id', 'w.events'])
      .where('w.active', '=', 1)
      .where(`o.${column}`, '>', shift(window.from))
      .where(`o.${column}`, '<=', shift(window.to))
      .where((eb) => eb.exists(eb.selectFrom('memberships as m').select(sql`1`.as('one')).whereRef('m.user_id', '=', 'w.user_id').whereRef('m.org_id', '=', 'o.org_id')))
      .orderBy(`o.${column}`)
      .execute();
  }

  async function eventsIn(window: Window) {
    const found: { hit: Hit; type: TimeEvent; at: string }[] = [];
    for (const hit of await hits('starts_at', window, STARTING_LEAD_MS)) {
      found.push({ hit, type: 'session.starting', at: new Date(Date.parse(hit.starts_at) - STARTING_LEAD_MS).toISOString() });
    }
    for (const hit of await hits('starts_at', window, 0)) found.push({ hit, type: 'session.started', at: hit.starts_at });
    for (const hit of await hits('ends_at', window, 0)) found.push({ hit, type: 'session.ended', at: hit.ends_at });
    const wanted = found.filter((f) => parseJson(f.hit.events).includes(f.type));
    if (wanted.length === 0) return [];

    const users = new Map<number, AuthenticatedUser>();
    const userIds = [...new Set(wanted.map((f) => f.hit.user_id))];
    const orgs = await repo.orgIdsOf(storage.db, userIds);
    const people = await storage.db.selectFrom('users').select(['id', 'handle', 'timezone']).where('id', 'in', userIds).execute();
    for (const p of people) users.set(p.id, { id: p.id, handle: p.handle, timezone: p.timezone, orgIds: orgs.get(p.id) ?? [] });

    const records = new Map<string, Promise<unknown>>();
    const out = [];
    for (const f of wanted) {
      const user = users.get(f.hit.user_id);
      if (user === undefined) continue;
      const key = `${user.id}:${f.hit.session_id}:${f.hit.occurrence_date}`;
      let record = records.get(key);
      if (record === undefined) {
        // The occurrence as the user sees it (one-off sessions have no occurrence date to name).
        record = sessions.get(user, f.hit.session_id, f.hit.occurrence_date === '' ? undefined : f.hit.occurrence_date).catch(async (error: unknown) => {
          if (!(error instanceof ApiError)) throw error;
          if (error.status === 404) return undefined;
          return sessions.get(user, f.hit.session_id).catch(() => undefined);
        });
        records.set(key, record);
      }
      const data = (await record) as { id: number } | undefined;
      if (data === undefined) continue;
      out.push({
        trigger: { webhook_id: f.hit.webhook_id, session_id: f.hit.session_id, occurrence_date: f.hit.occurrence_date, type: f.type, fires_at: f.at },
        delivery: eventOf({ webhookId: f.hit.webhook_id, type: f.type, timestamp: f.at, data }),
      });
    }
    return out;
  }

  return {
    /** One bounded step; returns 1 while it is catching up (run again at once), else 0. */
    async step(nowMs = Date.now()): Promise<number> {
      const state = await repo.readState(storage.db, 'clock');
      const checked = state?.instant ?? null;
      const now = new Date(nowMs).toISOString();
      if (checked === null) {
        // First run ever: nothing was promised before webhooks existed.
        await storage.transaction(async (trx) => {
          const locked = await repo.lockState(trx, 'clock');
          if (locked?.instant === null) await repo.writeState(trx, 'clock', { instant: now });
        });
        return 0;
      }
      const fromMs = Math.max(Date.parse(checked), nowMs - CLOCK_CATCH_UP_MS);
      const toMs = Math.min(nowMs, fromMs + CLOCK_SLICE_MS);
      if (toMs <= fromMs) return 0;
      const window = { from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString() };
      const events = await eventsIn(window);
      return storage.transaction(async (trx) => {
        const locked = await repo.lockState(trx, 'clock');
        // Another instance checked this window meanwhile.
        if (locked?.instant !== checked) return 1;
        const fresh = new Set((await repo.markTriggers(trx, events.map((e) => e.trigger))).map((t) => t));
        await outbox.enqueue(
          trx,
          events.filter((e) => fresh.has(e.trigger)).map((e) => e.delivery),
          now,
        );
        await repo.writeState(trx, 'clock', { instant: window.to });
        return toMs < nowMs ? 1 : 0;
      });
    },
  };
}
