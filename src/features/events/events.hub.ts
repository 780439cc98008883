import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { Storage } from '../../storage/database.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import type { AuthService } from '../auth/auth.service.js';
import type { ChangesService } from '../changes/changes.service.js';
import { createChangePoller } from './events.poller.js';
import { type StreamSlot, createStreamSlots } from './events.slots.js';
import { createTicker } from './events.ticker.js';
import { type Stream, createHeartbeat, endStream, writeAll, writeTo } from './events.sockets.js';
import { createOccurrenceWatch, createTokenWatch } from './events.watch.js';

export interface HubSettings {
  pollMs: number;
  heartbeatMs: number;
  maxStreams: number;
  perToken: number;
}

export type EventHub = ReturnType<typeof createEventHub>;

/**
 * The event streams of one instance. One tick at a time serves them all, every `pollMs`:
 * the tokens' check, the change log's poller (events.poller.ts: one read of the new rows
 * for every stream, then each stream's generator, in step or catching up through the
 * feed) and the occurrences' starts and ends. Nothing runs while no stream is open.
 */
export function createEventHub(deps: { storage: Storage; changes: ChangesService; auth: AuthService; settings: HubSettings; log: FastifyBaseLogger }) {
  const { settings } = deps;
  const streams = new Set<Stream>();
  const slots = createStreamSlots(settings);
  const end = (stream: Stream) => endStream(stream, streams);
  const poller = createChangePoller({ storage: deps.storage, changes: deps.changes, writeAll: (list, text) => writeAll(list, text, streams) });
  const occurrences = createOccurrenceWatch({ storage: deps.storage, streams, write: (stream, text) => writeTo(stream, text, streams) });
  let closing = false;
  const ticker = createTicker({
    steps: [createTokenWatch({ auth: deps.auth, streams, end }), () => poller.follow(streams), () => occurrences.announce()],
    pollMs: settings.pollMs,
    active: () => streams.size > 0,
    idle: () => {
      poller.reset();
      occurrences.reset();
    },
    log: deps.log,
  });
  const heartbeat = createHeartbeat({ open: streams, settings, closing: () => closing, log: deps.log });

  return {
    /**
     * Takes a stream slot for this token at once, before anything is awaited (events.slots.ts);
     * undefined when none is free. The stream opened with it holds it until it closes;
     * a request that opens none gives it back with release().
     */
    reserve: (tokenHash: string): StreamSlot | undefined => (closing ? undefined : slots.take(tokenHash)),

    /** The position a stream without a cursor starts after: the log's head now. */
    head: () => deps.changes.head(),

    /**
     * Adds a stream whose response head is written; it is sent what changed after `cursor`
     * from the next tick on, at once (or right after the tick that runs). Synchronous, so
     * that a shutdown cannot slip between the response head and the stream's registration.
     */
    open(q: { user: AuthenticatedUser; tokenHash: string; res: ServerResponse; cursor: number; slot: StreamSlot }): Promise<void> {
      if (closing) {
        q.slot.release();
        q.res.end();
        return Promise.resolve();
      }
      const stream: Stream = { user: q.user, tokenHash: q.tokenHash, slot: q.slot, res: q.res, cursor: q.cursor, lastWriteAt: Date.now(), closed: false };
      streams.add(stream);
      q.res.once('close', () => {
        stream.closed = true;
        streams.delete(stream);
        stream.slot.release();
      });
      ticker.now();
      heartbeat.start();
      return Promise.resolve();
    },

    get size() {
      return streams.size;
    },

    /** Ends every stream (shutdown): clients reconnect elsewhere with Last-Event-ID. */
    close() {
      closing = true;
      ticker.stop();
      heartbeat.stop();
      for (const stream of [...streams]) end(stream);
    },
  };
}
