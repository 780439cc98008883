import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { categoryDomains } from '../blocker/blocker.categories.js';
import type { Session, SessionsApi } from '../sessions/sessions.api.js';
import { MAX_ACTIVE } from './now.schema.js';

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

/** GET /me/now: a thin consumer of the sessions api (its occurrences at an instant), plus what to block. */
export function createNowService(sessions: SessionsApi) {
  return {
    async now(user: AuthenticatedUser, clock: Date = new Date()) {
      const { active, next } = await sessions.recordsAt(user, clock, MAX_ACTIVE);
      return { data: { active, next, ...enforcement(active) } };
    },
  };
}
