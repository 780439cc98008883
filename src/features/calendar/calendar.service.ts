import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Storage } from '../../storage/database.js';
import { etagOf } from '../../toolkit/entity-tags.js';
import { conflict, notFound } from '../../toolkit/errors.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { lockUser } from '../auth/auth.principals.js';
import type { SessionsApi } from '../sessions/sessions.api.js';
import { buildIcs, zonesOf } from './calendar.ics.js';
import { toCalendarFeed, toCreatedCalendarFeed } from './calendar.model.js';
import { createCalendarRepository } from './calendar.repository.js';
import { type CreateCalendarFeedBody, MAX_FEEDS_PER_USER, MAX_FEED_EVENTS } from './calendar.schema.js';
import { generateFeedSecret, hashFeedSecret, secretOfFile } from './calendar.secret.js';
import { prepareZones } from './calendar.vtimezone.js';

export const DEFAULT_FEED_NAME = 'Focus sessions';
/** Bytes of rendered feeds kept at most (a feed of MAX_FEED_EVENTS sessions in as many zones is about 1.5 MB). */
const RENDERED_BYTES = 32 * 1024 * 1024;

/**
 * A feed as served: its bytes and their ETag, made once per version of the feed, so that a
 * poll of an unchanged feed neither encodes nor hashes 1.5 MB again.
 */
export interface RenderedFeed {
  body: Buffer;
  etag: string;
  truncated: boolean;
}

/** Started by the server: every time zone's definition computed off the event loop before feeds need them. */
export { warmZones } from './calendar.vtimezone.js';

export type CalendarService = ReturnType<typeof createCalendarService>;

/** A feed found by its secret: its name, its user, and the key its own rate limit counts under. */
export interface FeedOfSecret {
  name: string;
  user: AuthenticatedUser;
  rateKey: string;
}

/**
 * Calendar feeds: creating, listing and revoking them, and the `.ics` text a secret URL serves.
 * Built once per storage; `publicUrl` is PUBLIC_URL (links in feeds, `webcal_url`), or null.
 */
export function createCalendarService(storage: Storage, sessions: SessionsApi, { publicUrl }: { publicUrl: string | null }) {
  const feeds = createCalendarRepository(storage);
  // The last rendering of each feed by its fingerprint, bounded in total bytes: the least recently fetched go first.
  const rendered = new LRUCache<string, { fingerprint: string; feed: RenderedFeed }>({ maxSize: RENDERED_BYTES, sizeCalculation: ({ feed }) => Math.max(1, feed.body.length) });

  return {
    /** A new feed; its secret is in the answer only. 409 once the user holds MAX_FEEDS_PER_USER. */
    async create(user: AuthenticatedUser, body: CreateCalendarFeedBody | undefined) {
      const name = body?.name?.trim() ?? DEFAULT_FEED_NAME;
      const secret = generateFeedSecret();
      const row = await storage.transaction(async (trx) => {
        // The user's row, locked: concurrent creates take turns, so the cap holds.
        await lockUser(storage, trx, user.id);
        if ((await feeds.countOf(trx, user.id)) >= MAX_FEEDS_PER_USER) {
          throw conflict(`You hold ${MAX_FEEDS_PER_USER} calendar feeds, the most there may be; delete one first.`);
        }
        return feeds.insert(trx, { userId: user.id, name, secretHash: hashFeedSecret(secret), now: new Date().toISOString() });
      });
      return toCreatedCalendarFeed(row, secret, publicUrl);
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

    /** The feed's iCalendar bytes and ETag: at most MAX_FEED_EVENTS sessions, the most recently changed. */
    async ics(feed: FeedOfSecret): Promise<RenderedFeed> {
      const now = new Date();
      // Every change of a session (its description's fields too) moves its updated_at and sequence:
      // the same versions, name, year and links make the same bytes, so an unchanged feed is written once.
      const versions = await sessions.feedVersions(feed.user, MAX_FEED_EVENTS + 1);
      const fingerprint = createHash('sha256').update(JSON.stringify([feed.name, now.getUTCFullYear(), publicUrl, versions])).digest('base64url');
      const cached = rendered.get(feed.rateKey);
      if (cached?.fingerprint === fingerprint) return cached.feed;
      // Each with the rrule it shows: a series stored before `rrule` was kept gets it derived until the indexer stores it.
      const rows = await sessions.feedSessions(feed.user, MAX_FEED_EVENTS + 1);
      const shown = rows.slice(0, MAX_FEED_EVENTS);
      const truncated = rows.length > shown.length;
      // Zones not seen yet by this process are computed a slice at a time, without holding other requests.
      await prepareZones(zonesOf(shown), now);
      const body = Buffer.from(await buildIcs({ name: feed.name, sessions: shown, publicUrl, now }));
      const result = { body, etag: etagOf(body), truncated };
      rendered.set(feed.rateKey, { fingerprint, feed: result });
      return result;
    },
  };
}
