import { parseJson } from '../../storage/columns.js';
import type { Storage } from '../../storage/database.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { principalsOf } from '../auth/auth.principals.js';
import type { Crossing, SessionsApi } from '../sessions/sessions.api.js';
import type { TimeEvent } from './webhooks.events.js';
import { createOutbox } from './webhooks.outbox.js';
import { eventOf } from './webhooks.payload.js';
import { type WebhooksRepository, createWebhooksRepository } from './webhooks.repository.js';

/** Missed instants older than this are not raised late (contract section 9). */
export const CLOCK_CATCH_UP_MS = 86_400_000;
/** One step checks at most this much time: a long catch-up runs as many bounded steps. */
const CLOCK_SLICE_MS = 60_000;

type Window = { from: string; to: string };
/** An occurrence at an instant and who may hear of it: everyone involved, or for a reminder the one person it is for. */
type Due = Pick<Crossing, 'session_id' | 'occurrence_date' | 'org_id' | 'users'> & { type: TimeEvent; at: string; minutes_before?: number };
type Hit = { due: Due; webhook_id: number; user: AuthenticatedUser };

/** The (instant, webhook) pairs of subscribers the instants concern, members of its org, who want its event. */
async function hitsOf(storage: Storage, repo: WebhooksRepository, dues: readonly Due[]): Promise<Hit[]> {
  const hooks = await repo.hooksOf(storage.db, [...new Set(dues.flatMap((d) => [...d.users]))]);
  const principals = await principalsOf(storage.db, [...new Set(hooks.map((h) => h.user_id))], { enabledOnly: true });
  const wanted = hooks.map((h) => ({ ...h, events: parseJson(h.events), user: principals.get(h.user_id) }));
  return dues.flatMap((due) =>
    wanted.flatMap(({ id, user_id, events, user }) =>
      user !== undefined && due.users.has(user_id) && user.orgIds.includes(due.org_id) && events.includes(due.type) ? [{ due, webhook_id: id, user }] : [],
    ),
  );
}

/** What each time-triggered event of the window is: the reminders due in it, then starts and ends. */
async function duesIn(sessions: SessionsApi, window: Window): Promise<Due[]> {
  const [reminders, crossed] = await Promise.all([sessions.remindersIn(window), sessions.crossing(window)]);
  return [
    ...reminders.map((r) => ({ ...r, type: 'session.starting' as const, users: new Set([r.user_id]) })),
    ...crossed.map((o) => ({ ...o, type: o.event })),
  ];
}

/**
 * Time-triggered events from the sessions' occurrence source (the index: never by expanding
 * series): each step takes the window (last checked instant, now] and enqueues
 * `session.starting` (one per reminder: person involved and offset, sessions' remindersIn),
 * `session.started` and `session.ended` for the webhooks of users involved in the occurrence
 * (sessions' involvedUsers) who are members of its org. The last checked instant is kept in
 * the database, so that after every instance was down the events missed (up to 24 h) are
 * raised late with their own instants; each event is enqueued once per webhook, occurrence
 * and offset, whichever instance sees it (webhook_triggers).
 */
export function createClock(storage: Storage, sessions: SessionsApi, queued: () => void = () => {}) {
  const repo = createWebhooksRepository(storage);
  const outbox = createOutbox(storage);

  async function eventsIn(window: Window) {
    const hits = await hitsOf(storage, repo, await duesIn(sessions, window));
    if (hits.length === 0) return [];
    // The occurrence as each user sees it (one-off sessions have no occurrence date to name); gone from sight: nothing is sent.
    const keyOf = (hit: Hit) => `${hit.user.id}:${hit.due.session_id}:${hit.due.occurrence_date}`;
    const asked = [...new Map(hits.map((hit) => [keyOf(hit), hit])).values()];
    const records = await sessions.recordsAsSeen(
      asked.map((hit) => ({ reader: hit.user, id: hit.due.session_id, date: hit.due.occurrence_date === '' ? undefined : hit.due.occurrence_date })),
    );
    const recordOf = new Map(asked.map((hit, i) => [keyOf(hit), records[i]]));
    return hits.flatMap((hit) => {
      const record = recordOf.get(keyOf(hit));
      if (record === undefined) return [];
      const { due, webhook_id } = hit;
      const data = due.minutes_before === undefined ? record : { ...record, minutes_before: due.minutes_before };
      // One mark per offset: a session.starting of each reminder is its own event.
      const type = due.minutes_before === undefined ? due.type : `${due.type}:${due.minutes_before}`;
      return [
        {
          trigger: { webhook_id, session_id: due.session_id, occurrence_date: due.occurrence_date, type, fires_at: due.at },
          delivery: eventOf({ webhookId: webhook_id, type: due.type, timestamp: due.at, data }),
        },
      ];
    });
  }

  return {
    /** One bounded step; returns 1 while it is catching up (run again at once), else 0. */
    async step(nowMs = Date.now()): Promise<number> {
      // No webhook listens for time events: nothing else is read or written (an idle laptop's database
      // stays untouched). Each webhook write meanwhile moves the checked instant up to then (startRestingClock).
      if (!(await repo.anyListensForTime(storage.db))) return 0;
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
      const step = await storage.transaction(async (trx) => {
        const locked = await repo.lockState(trx, 'clock');
        // Another instance checked this window meanwhile.
        if (locked?.instant !== checked) return { more: 1, enqueued: 0 };
        const fresh = new Set((await repo.markTriggers(trx, events.map((e) => e.trigger))).map((t) => t));
        const due = events.filter((e) => fresh.has(e.trigger)).map((e) => e.delivery);
        await outbox.enqueue(trx, due, now);
        await repo.writeState(trx, 'clock', { instant: window.to });
        return { more: toMs < nowMs ? 1 : 0, enqueued: due.length };
      });
      // Committed: a resting dispatcher may look now.
      if (step.enqueued > 0) queued();
      return step.more;
    },
  };
}
