import type { Storage } from '../../storage/database.js';
import { notFound } from '../../toolkit/errors.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { addDays } from '../recurrence/recurrence.dates.js';
import { localToEpochMillis, todayIn } from '../recurrence/recurrence.time.js';
import { completedStarts, participationHistory } from '../sessions/sessions.api.js';
import { taskCompletions } from '../tasks/tasks.completions.js';
import type { OrgStats, Stats, StatsQuery } from './stats.schema.js';
import { type Activity, type StatsRange, localDayNumber, orgBuckets, resolveRange, streaks, userBuckets } from './stats.service.js';

export interface StatsDeps {
  /** The ids of an org's members (the auth feature's). */
  memberIds: (orgId: number) => Promise<number[]>;
}

export type StatsReader = ReturnType<typeof createStatsReader>;

/**
 * The reads behind focus statistics, each from the feature that owns the rows: participation
 * (sessions), completions (tasks), members (auth). A fixed number of statements per request.
 */
export function createStatsReader(storage: Storage, deps: StatsDeps) {
  /** The UTC instants [from, to) of the range's local days in `zone`. */
  const instants = (range: StatsRange, zone: string) => ({
    from: new Date(localToEpochMillis(range.from, 0, zone)).toISOString(),
    to: new Date(localToEpochMillis(addDays(range.to, 1), 0, zone)).toISOString(),
  });

  async function activity(userIds: readonly number[], range: StatsRange, zone: string): Promise<Activity> {
    const span = { ...instants(range, zone), userIds };
    const [sessions, tasks] = await Promise.all([
      participationHistory(storage.db, span),
      taskCompletions(storage.db, { ownerIds: userIds, from: span.from, to: span.to }),
    ]);
    return { sessions, tasks: tasks.map((t) => ({ userId: t.ownerId, completedAt: Date.parse(t.completedAt) })) };
  }

  return {
    async mine(user: AuthenticatedUser, query: StatsQuery, now = new Date()): Promise<{ data: Stats }> {
      const zone = user.timezone;
      const range = resolveRange(query, todayIn(zone, now));
      const [done, starts] = await Promise.all([activity([user.id], range, zone), completedStarts(storage.db, user.id)]);
      const streak = streaks(
        starts.map((ms) => localDayNumber(ms, zone)),
        localDayNumber(now.getTime(), zone),
      );
      return { data: { ...userBuckets(range, zone, done), current_streak_days: streak.current, longest_streak_days: streak.longest } };
    },

    /** Members only: anyone else gets 404, as for an org that does not exist. */
    async org(user: AuthenticatedUser, orgId: number, query: StatsQuery, now = new Date()): Promise<{ data: OrgStats }> {
      if (!user.orgIds.includes(orgId)) throw notFound('org');
      const zone = user.timezone;
      const range = resolveRange(query, todayIn(zone, now));
      const members = await deps.memberIds(orgId);
      return { data: orgBuckets(range, zone, await activity(members, range, zone)) };
    },
  };
}
