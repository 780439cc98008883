import type { Storage } from '../../storage/database.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { categoryDomains } from '../blocker/blocker.categories.js';
import { addDays } from '../recurrence/recurrence.dates.js';
import { ruleDatesFrom } from '../recurrence/recurrence.engine.js';
import { createSessionsContext } from '../sessions/sessions.context.js';
import { type DatedKey, datedBefore } from '../sessions/sessions.occurrence-index.js';
import { occurrenceView, seriesPattern } from '../sessions/sessions.occurrences.js';
import { occurrenceKey } from '../sessions/sessions.participants-repository.js';
import type { UnindexedSession } from '../sessions/sessions.repository.js';
import { type ItemKey, loadItems, renderItems } from '../sessions/sessions.read-model.js';
import type { Session } from '../sessions/sessions.schema.js';
import { MAX_ACTIVE } from './now.schema.js';
import { createNowRepository } from './now.repository.js';

/**
 * The longest a series goes without an occurrence (monthly on the 31st without fallback:
 * 31 August → 31 October). The occurrence index holds every series at least this far
 * ahead, or the series is expanded per request: so the next occurrence is never missed,
 * though the index itself reaches only 92 days ahead.
 */
const LONGEST_GAP_DAYS = 62;

const byListingOrder = (a: DatedKey, b: DatedKey) => (datedBefore(a, b) ? -1 : datedBefore(b, a) ? 1 : 0);

interface Around {
  running: DatedKey[];
  next: DatedKey | undefined;
}

/**
 * The running and next occurrences of sessions the index does not hold far enough,
 * expanded from their pattern: `from`–`to` are the local dates that can be running.
 */
function expand(sessions: readonly Omit<UnindexedSession, 'indexed_from'>[], exceptions: Map<number, Set<string>>, hostCompleted: Set<string>, at: string, from: string, to: string): Around {
  const out: Around = { running: [], next: undefined };
  for (const s of sessions) {
    const pattern = seriesPattern(s, exceptions.get(s.id));
    const dates = pattern === null ? [s.schedule] : ruleDatesFrom(pattern, from);
    for (const date of dates) {
      if (date < from || pattern?.exceptions?.has(date) === true) continue;
      const view = occurrenceView(s, date);
      const key = { startsAt: view.starts_at, id: s.id, date, endsAt: view.ends_at, completed: s.status === 'completed' || hostCompleted.has(occurrenceKey(s.id, date)) };
      if (view.starts_at > at) {
        if (out.next === undefined || datedBefore(key, out.next)) out.next = key;
        break;
      }
      if (date <= to && view.ends_at > at) out.running.push(key);
    }
  }
  return out;
}

const keyOf = (r: { session_id: number; occurrence_date: string; starts_at: string; ends_at: string; completed: number }): DatedKey => ({
  startsAt: r.starts_at,
  id: r.session_id,
  date: r.occurrence_date,
  endsAt: r.ends_at,
  completed: r.completed === 1,
});

/** The union of the active records' enabled website blockers (null when none) and snoozes. */
export function enforcement(active: readonly Session[]) {
  const category = new Set<string>();
  const urls = new Set<string>();
  let blocking = false;
  const snooze: Record<string, boolean> = {};
  for (const s of active) {
    if (s.website_blocker_enabled && s.website_blocker !== null) {
      blocking = true;
      for (const c of s.website_blocker.category) category.add(c);
      if (s.website_blocker.mode === 'custom') for (const u of s.website_blocker.urls) urls.add(u);
    }
    if (s.snooze_enabled) for (const [app, on] of Object.entries(s.snooze_apps)) snooze[app] = snooze[app] === true || on;
  }
  return { website_blocker: blocking ? { category: [...category], domains: categoryDomains(category), urls: [...urls] } : null, snooze_apps: snooze };
}

export type NowService = ReturnType<typeof createNowService>;

/** GET /me/now. Built once per storage. */
export function createNowService(storage: Storage) {
  const ctx = createSessionsContext(storage);
  const repo = createNowRepository(storage);

  return {
    /**
     * Three reads of the index and the sessions it does not hold far enough (plus two when
     * there are such), then the records as dated listings render them (loadItems).
     */
    async now(user: AuthenticatedUser, clock: Date = new Date()) {
      const at = clock.toISOString();
      const today = at.slice(0, 10);
      // A local date is within a day of UTC's, and a session lasts at most a day.
      const from = addDays(today, -2);
      const to = addDays(today, 1);
      const [running, next, unindexed] = await Promise.all([
        repo.running({ user, at, from, to, limit: MAX_ACTIVE }),
        repo.next({ user, at, from: addDays(today, -1) }),
        repo.unindexed({ user, through: addDays(today, LONGEST_GAP_DAYS + 1) }),
      ]);
      let around: Around = { running: running.map(keyOf), next: next === undefined ? undefined : keyOf(next) };
      if (unindexed.length > 0) {
        const ids = unindexed.map((s) => s.id);
        const [exceptions, hostCompleted] = await Promise.all([
          ctx.sessions.exceptionsOf(storage.db, ids),
          ctx.participants.hostCompletions(storage.db, { sessionIds: ids, from, to: addDays(today, 400) }),
        ]);
        const expanded = expand(unindexed, exceptions, hostCompleted, at, from, to);
        const merged = new Map([...around.running, ...expanded.running].map((k) => [`${k.id}|${k.date}`, k]));
        const candidates = [around.next, expanded.next].filter((k): k is DatedKey => k !== undefined).sort(byListingOrder);
        around = { running: [...merged.values()].sort(byListingOrder).slice(0, MAX_ACTIVE), next: candidates[0] };
      }
      const asItem = (k: DatedKey): ItemKey => ({ id: k.id, occurrence: { date: k.date, starts_at: k.startsAt, ends_at: k.endsAt, completed: k.completed } });
      const items = [...around.running, ...(around.next === undefined ? [] : [around.next])].map(asItem);
      const records = renderItems(await loadItems(ctx, storage.db, { user, items, now: clock }), items, user, { listing: true });
      const nextRecord = around.next === undefined ? null : (records.find((r) => r.id === around.next?.id && r.occurrence_date === around.next.date) ?? null);
      const active = records.filter((r) => r !== nextRecord);
      return { data: { active, next: nextRecord, ...enforcement(active) } };
    },
  };
}
