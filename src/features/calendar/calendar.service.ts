import type { Storage } from '../../storage/database.js';
import { conflict, notFound } from '../../toolkit/errors.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { toRRule } from '../recurrence/recurrence.rrule.js';
import { seriesPattern } from '../sessions/sessions.occurrences.js';
import { createSessionsRepository } from '../sessions/sessions.repository.js';
import { buildIcs, zonesOf } from './calendar.ics.js';
import { toCalendarFeed, toCreatedCalendarFeed } from './calendar.model.js';
import { createCalendarRepository } from './calendar.repository.js';
import { type CreateCalendarFeedBody, MAX_FEEDS_PER_USER, MAX_FEED_EVENTS } from './calendar.schema.js';
import { generateFeedSecret, hashFeedSecret, secretOfFile } from './calendar.secret.js';
import { prepareZones } from './calendar.vtimezone.js';

export const DEFAULT_FEED_NAME = 'Focus sessions';

export type CalendarService = ReturnType<typeof createCalendarService>;

/** A feed found by its secret: its name, its user, and the key its own rate limit counts under. */
export interface FeedOfSecret {
  name: string;
  user: AuthenticatedUser;
  rateKey: string;
}

/** Calendar feeds: creating, listing and revoking them, and the `.ics` text a secret URL serves. Built once per storage. */
export function createCalendarService(storage: Storage) {
  const feeds = createCalendarRepository(storage);
  const sessions = createSessionsRepository(storage);

  return {
    /** A new feed; its secret is in the answer only. 409 once the user holds MAX_FEEDS_PER_USER. */
    async create(user: AuthenticatedUser, body: CreateCalendarFeedBody | undefined) {
      const name = body?.name?.trim() ?? DEFAULT_FEED_NAME;
      const secret = generateFeedSecret();
      const row = await storage.transaction(async (trx) => {
        // The user's row, locked: concurrent creates take turns, so the cap holds.
        await storage.forUpdate(trx.selectFrom('users').select('id').where('id', '=', user.id)).execute();
        if ((await feeds.countOf(trx, user.id)) >= MAX_FEEDS_PER_USER) {
          throw conflict(`You hold ${MAX_FEEDS_PER_USER} calendar feeds, the most there may be; delete one first.`);
        }
        return feeds.insert(trx, { userId: user.id, name, secretHash: hashFeedSecret(secret), now: new Date().toISOString() });
      });
      return toCreatedCalendarFeed(row, secret);
    },

    async list(user: AuthenticatedUser) {
      return { data: (await feeds.listOf(user.id, MAX_FEEDS_PER_USER)).map(toCalendarFeed), next_cursor: null };
    },

    /** Revokes: the row goes, and with it the URL. Another user's feed is 404, like one that never was. */
    async revoke(user: AuthenticatedUser, id: number): Promise<void> {
      const deleted = await storage.transaction((trx) => feeds.deleteOwned(trx, { userId: user.id, id }));
      if (!deleted) throw notFound('calendar feed');
    },

    /**
     * The feed at `/ical/<file>`, with the key its rate limit counts under (the secret's
     * hash, never the secret). Every unknown, malformed or revoked secret is the same 404.
     */
    async feedOf(file: string): Promise<FeedOfSecret> {
      const secret = secretOfFile(file);
      const hash = secret === undefined ? undefined : hashFeedSecret(secret);
      const feed = hash === undefined ? undefined : await feeds.findByHash(hash);
      if (hash === undefined || feed === undefined) throw notFound('calendar feed');
      return { ...feed, rateKey: `feed:${hash}` };
    },

    /** The feed's iCalendar text: at most MAX_FEED_EVENTS sessions, the most recently changed. */
    async ics(feed: FeedOfSecret): Promise<{ text: string; truncated: boolean }> {
      const rows = await feeds.sessionsOf(feed.user, MAX_FEED_EVENTS + 1);
      const shown = rows.slice(0, MAX_FEED_EVENTS);
      // A series stored before `rrule` was kept gets it computed here until the indexer stores it.
      const stale = shown.filter((r) => r.is_recurring === 1 && r.rrule === null);
      if (stale.length > 0) {
        const exceptions = await sessions.exceptionsOf(storage.db, stale.map((r) => r.id));
        for (const row of stale) {
          const pattern = seriesPattern(row, exceptions.get(row.id));
          if (pattern !== null) row.rrule = toRRule(pattern, { date: pattern.start, minutes: row.time_minutes, timezone: row.timezone });
        }
      }
      // Zones not seen yet by this process are computed a slice at a time, without holding other requests.
      const now = new Date();
      await prepareZones(zonesOf(shown), now);
      return { text: buildIcs({ name: feed.name, sessions: shown, now }), truncated: rows.length > shown.length };
    },
  };
}
