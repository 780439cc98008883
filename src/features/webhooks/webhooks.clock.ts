import { parseJson } from '../../storage/columns.js';
import type { Storage } from '../../storage/database.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { principalsOf } from '../auth/auth.principals.js';
import type { Crossing, SessionsApi } from '../sessions/sessions.api.js';
import { STARTING_LEAD_MS, type TimeEvent } from './webhooks.events.js';
import { createOutbox } from './webhooks.outbox.js';
import { eventOf } from './webhooks.payload.js';
import { createWebhooksRepository } from './webhooks.repository.js';

/** Missed instants older than this are not raised late (contract section 9). */
export const CLOCK_CATCH_UP_MS = 86_400_000;
/** One step checks at most this much time: a long catch-up runs as many bounded steps. */
const CLOCK_SLICE_MS = 60_000;

type Window = { from: string; to: string };
type Hit = { occurrence: Crossing; webhook_id: number; user: AuthenticatedUser };

const shifted = (window: Window, leadMs: number): Window => ({
  from: new Date(Date.parse(window.from) + leadMs).toISOString(),
  to: new Date(Date.parse(window.to) + leadMs).toISOString(),
});

/** The (occurrence, webhook) pairs of subscribers involved in the occurrences, members of its org, with the events each wants. */
async function hitsOf(storage: Storage, groups: readonly Crossing[][]): Promise<{ hits: Hit[][]; wants: Map<number, string[]> }> {
  const userIds = [...new Set(groups.flat().flatMap((o) => [...o.users]))];
  const hooks = userIds.length === 0 ? [] : await storage.db.selectFrom('webhooks').select(['id', 'user_id', 'events']).where('user_id', 'in', userIds).where('active', '=', 1).orderBy('id').execute();
  const principals = await principalsOf(storage.db, [...new Set(hooks.map((h) => h.user_id))]);
  const wants = new Map(hooks.map((h) => [h.id, parseJson(h.events)]));
  const hits = groups.map((group) =>
    group.flatMap((occurrence) =>
      hooks.flatMap((h) => {
        const user = principals.get(h.user_id);
        return user !== undefined && occurrence.users.has(h.user_id) && user.orgIds.includes(occurrence.org_id) ? [{ occurrence, webhook_id: h.id, user }] : [];
      }),
    ),
  );
  return { hits, wants };
}

/**
 * Time-triggered events from the sessions' occurrence source (the index: never by expanding
 * series): each step takes the window (last checked instant, now] and enqueues
 * `session.starting` (5 minutes before an occurrence starts), `session.started` and
 * `session.ended` for the webhooks of users involved in the occurrence (sessions'
 * involvedUsers) who are members of its org. The last checked instant is kept in the
 * database, so that after every instance was down the events missed (up to 24 h) are raised
 * late with their own instants; each event is enqueued once per webhook and occurrence,
 * whichever instance sees it (webhook_triggers).
 */
export function createClock(storage: Storage, sessions: SessionsApi) {
  const repo = createWebhooksRepository(storage);
  const outbox = createOutbox(storage);

  async function eventsIn(window: Window) {
    const [ahead, crossed] = await Promise.all([
      sessions.crossing({ ...shifted(window, STARTING_LEAD_MS), which: ['session.started'] }),
      sessions.crossing(window),
    ]);
    const { hits, wants } = await hitsOf(storage, [ahead, crossed.filter((o) => o.event === 'session.started'), crossed.filter((o) => o.event === 'session.ended')]);
    const [starting = [], started = [], ended = []] = hits;
    const found: { hit: Hit; type: TimeEvent; at: string }[] = [
      ...starting.map((hit) => ({ hit, type: 'session.starting' as const, at: new Date(Date.parse(hit.occurrence.starts_at) - STARTING_LEAD_MS).toISOString() })),
      ...started.map((hit) => ({ hit, type: 'session.started' as const, at: hit.occurrence.starts_at })),
      ...ended.map((hit) => ({ hit, type: 'session.ended' as const, at: hit.occurrence.ends_at })),
    ];
    const wanted = found.filter((f) => wants.get(f.hit.webhook_id)?.includes(f.type) === true);
    if (wanted.length === 0) return [];
    // The occurrence as each user sees it (one-off sessions have no occurrence date to name); gone from sight: nothing is sent.
    const keyOf = (hit: Hit) => `${hit.user.id}:${hit.occurrence.session_id}:${hit.occurrence.occurrence_date}`;
    const asked = [...new Map(wanted.map((f) => [keyOf(f.hit), f.hit])).values()];
    const records = await sessions.recordsAsSeen(
      asked.map((hit) => ({ reader: hit.user, id: hit.occurrence.session_id, date: hit.occurrence.occurrence_date === '' ? undefined : hit.occurrence.occurrence_date })),
    );
    const recordOf = new Map(asked.map((hit, i) => [keyOf(hit), records[i]]));
    return wanted.flatMap((f) => {
      const data = recordOf.get(keyOf(f.hit));
      if (data === undefined) return [];
      const { webhook_id, occurrence: o } = f.hit;
      return [
        {
          trigger: { webhook_id, session_id: o.session_id, occurrence_date: o.occurrence_date, type: f.type, fires_at: f.at },
          delivery: eventOf({ webhookId: webhook_id, type: f.type, timestamp: f.at, data }),
        },
      ];
    });
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
