import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { Storage } from '../../storage/database.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import type { AuthService } from '../auth/auth.service.js';
import { type PositionedChange, concerns, createChangesRepository } from '../../changelog/changelog.repository.js';
import { type ChangesService, type PositionedEntry, encodeFeedCursor } from '../changes/changes.service.js';
import { type Occurrence, createOccurrenceFeed } from './events.occurrences.js';
import { type StreamSlot, createStreamSlots } from './events.slots.js';
import { type Stream, createHeartbeat, endStream, writeAll as writeEach, writeTo } from './events.sockets.js';

export interface HubSettings {
  pollMs: number;
  heartbeatMs: number;
  maxStreams: number;
  perToken: number;
}

/** Change rows the poller reads in one look; the rest on the next tick. */
const POLL_BATCH = 5_000;
/** Feed pages one stream is sent per tick while catching up, so one far-behind stream cannot hold a tick. */
const PAGES_PER_TICK = 5;
const PAGE = 100;
/** Streams caught up at once after a change (each a few queries): bounded, the pool is shared with requests. */
const PUMP_WIDTH = 8;
/**
 * Log rows one tick sends to the streams in step with it from one read; more (a burst of
 * writes, a bulk import) go through the paged feed per user, a few pages a tick.
 */
const IN_STEP_ROWS = PAGE * PAGES_PER_TICK;
/**
 * Users whose records one read serves: each costs some rendering on the event loop, so a
 * thousand users are read in a few rounds, with the loop free between them.
 */
const READERS_PER_READ = 100;
/** Token revocation and expiry, and the user's orgs, are checked this often at least (and at once when the auth revision moves). */
const TOKEN_CHECK_MS = 1_000;
export type EventHub = ReturnType<typeof createEventHub>;

/**
 * The event streams of one instance. One poller serves them all: every `pollMs` it reads
 * the change log's head and, when it moved, the new rows (one statement for every stream),
 * then catches up through the change feed only the streams those rows may concern; the
 * feed checks visibility per user. The occurrence index tells which occurrences started or
 * ended since the last look. Nothing runs while no stream is open.
 */
export function createEventHub(deps: { storage: Storage; changes: ChangesService; auth: AuthService; settings: HubSettings; log: FastifyBaseLogger }) {
  const { settings } = deps;
  const log = createChangesRepository(deps.storage);
  const occurrences = createOccurrenceFeed(deps.storage);
  const streams = new Set<Stream>();
  let timer: NodeJS.Timeout | undefined;
  let closing = false;
  /** The log position the poller has looked at (undefined until its first look). */
  let known: number | undefined;
  /** The instant through which occurrences' starts and ends were announced (undefined: since the hub was idle). */
  let announcedThrough: string | undefined;
  let tokensCheckedAt = Date.now();
  const slots = createStreamSlots(settings);
  /** The auth revision (AuthService.revision) the last check of the streams' tokens began at. */
  let checkedRevision: string | undefined;

  const write = (stream: Stream, text: string) => writeTo(stream, text, streams);
  const end = (stream: Stream) => endStream(stream, streams);
  const writeAll = (list: readonly Stream[], text: string) => writeEach(list, text, streams);

  /** The streams that would be pumped as one group: one user's, at one cursor. */
  const groupKey = (s: Stream) => `${s.user.id}:${s.user.orgIds.join(',')}:${s.cursor}`;

  const eventOf = ({ entry, position, changedAt }: PositionedEntry) => {
    const id = encodeFeedCursor({ phase: 'log', head: position, issuedAt: Math.min(Date.now(), Date.parse(changedAt)) });
    return `event: change\nid: ${id}\ndata: ${JSON.stringify(entry)}\n\n`;
  };

  /**
   * Sends a group of streams of one user at one cursor (several devices, several tabs)
   * what changed after it up to `upTo`, through the change feed (visibility per user): the
   * feed is read once for the group.
   */
  async function pump(group: Stream[], upTo: number): Promise<void> {
    const first = group.find((s) => !s.busy && !s.closed);
    if (first === undefined) return;
    // Only those still at the group's cursor: one that moved meanwhile is pumped on its own next time.
    const ready = group.filter((s) => !s.busy && !s.closed && s.cursor === first.cursor);
    for (const s of ready) s.busy = true;
    try {
      let cursor = first.cursor;
      // Pages stop once every stream of the group is gone: a closed stream is read for no one.
      for (let pages = 0; pages < PAGES_PER_TICK && cursor < upTo && ready.some((s) => !s.closed); pages++) {
        const page = await deps.changes.since(first.user, { after: cursor, upTo, limit: PAGE });
        const text = page.entries.map(eventOf).join('');
        if (text !== '') await writeAll(ready, text);
        if (page.next.head <= cursor) break;
        cursor = page.next.head;
        for (const s of ready) s.cursor = cursor;
      }
    } finally {
      for (const s of ready) s.busy = false;
    }
  }

  /** Pumps the streams by group, a few groups at a time, yielding to the event loop between groups (SQLite's statements run on it). */
  async function pumpAll(list: Stream[], upTo: number) {
    const queue = [...groupsOf(list).values()];
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(PUMP_WIDTH, queue.length) }, async () => {
        while (next < queue.length) {
          await pump(queue[next++] as Stream[], upTo);
          await new Promise((resolve) => setImmediate(resolve));
        }
      }),
    );
  }

  function groupsOf(list: readonly Stream[]): Map<string, Stream[]> {
    const groups = new Map<string, Stream[]>();
    for (const s of list) groups.set(groupKey(s), [...(groups.get(groupKey(s)) ?? []), s]);
    return groups;
  }

  /**
   * Sends streams that were at `from` what `rows` (the log from `from` up to `through`)
   * hold for them: the records are read once for all of them (a few statements, however
   * many users), where pumping would read the feed once per user.
   */
  async function pushInStep(list: readonly Stream[], rows: readonly PositionedChange[], through: number): Promise<void> {
    const groups = [...groupsOf(list).values()];
    for (const s of list) s.busy = true;
    try {
      for (let start = 0; start < groups.length; start += READERS_PER_READ) {
        const chunk = groups.slice(start, start + READERS_PER_READ).filter((group) => group.some((s) => !s.closed));
        if (chunk.length === 0) continue;
        const entries = await deps.changes.forReaders(chunk.map((group) => (group[0] as Stream).user), rows);
        for (const [i, group] of chunk.entries()) {
          const text = (entries[i] ?? []).map(eventOf).join('');
          if (text !== '') await writeAll(group, text);
          for (const s of group) s.cursor = through;
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      for (const s of list) s.busy = false;
    }
  }

  async function followLog(): Promise<void> {
    const head = await deps.changes.head();
    const from = known ?? head;
    let through = head;
    let rows: PositionedChange[] = [];
    if (head > from) {
      rows = await log.allAfter({ after: from, upTo: head, limit: POLL_BATCH });
      through = rows.length < POLL_BATCH ? head : (rows.at(-1)?.position ?? head);
    }
    const inStep: Stream[] = [];
    const behind: Stream[] = [];
    for (const stream of streams) {
      if (stream.cursor >= through) continue;
      // In step with the poller and nothing new concerns it: move on without a query.
      if (stream.cursor >= from && !rows.some((row) => concerns(stream.user, row))) stream.cursor = through;
      else if (stream.cursor === from && !stream.busy && rows.length <= IN_STEP_ROWS) inStep.push(stream);
      else behind.push(stream);
    }
    if (inStep.length > 0) await pushInStep(inStep, rows, through);
    await pumpAll(behind, through);
    known = through;
  }

  async function announceOccurrences(): Promise<void> {
    const now = new Date().toISOString();
    // Idle until now: what started while no stream was open is nobody's news.
    if (announcedThrough === undefined) announcedThrough = now;
    if (now <= announcedThrough) return;
    const found = await occurrences.between(announcedThrough, now);
    announcedThrough = now;
    for (const o of found) {
      for (const stream of streams) if (stream.user.orgIds.includes(o.org_id) && o.users.has(stream.user.id)) send(stream, o);
    }
  }

  const send = (stream: Stream, o: Occurrence) =>
    write(stream, `event: ${o.event}\ndata: ${JSON.stringify({ session_id: o.session_id, occurrence_date: o.occurrence_date, starts_at: o.starts_at, ends_at: o.ends_at })}\n\n`);

  async function checkTokens(): Promise<void> {
    // A revocation, disabled user or lost membership is acted on at the next tick, not the next look.
    const revision = deps.auth.revision();
    if (Date.now() - tokensCheckedAt < TOKEN_CHECK_MS && revision !== undefined && revision === checkedRevision) return;
    tokensCheckedAt = Date.now();
    checkedRevision = revision;
    const checked = new Set([...streams].map((s) => s.tokenHash));
    const active = await deps.auth.activeTokens([...checked]);
    // Only the tokens asked about: a stream that opened while the query ran, with a token
    // no stream had before, is not in the answer and was authenticated just now.
    for (const stream of streams) {
      if (!checked.has(stream.tokenHash)) continue;
      const orgIds = active.get(stream.tokenHash);
      // Revoked, expired, or its user disabled; or an org left (`focus users remove`): the stream
      // ends, and a reconnect starts over with what the user may see now.
      if (orgIds === undefined || stream.user.orgIds.some((org) => !orgIds.includes(org))) end(stream);
      // An org joined is followed from then on.
      else if (orgIds.length !== stream.user.orgIds.length) stream.user = { ...stream.user, orgIds };
    }
  }

  const heartbeat = createHeartbeat({ open: streams, settings, closing: () => closing, log: deps.log });

  /** One tick at a time: a stream opening while one runs must not start a second loop beside it. */
  let ticking = false;
  function schedule(delayMs: number) {
    if (timer === undefined && !ticking && !closing) timer = setTimeout(() => void tick(), delayMs);
  }

  async function tick(): Promise<void> {
    timer = undefined;
    ticking = true;
    for (const step of [checkTokens, followLog, announceOccurrences]) {
      if (streams.size === 0 || closing) break;
      try {
        await step();
      } catch (error) {
        // The database may be away a moment; the streams stay open and the next tick tries again.
        deps.log.warn({ err: error }, 'event streams: a poll failed; retrying');
      }
    }
    ticking = false;
    if (streams.size > 0 && !closing) schedule(settings.pollMs);
    else {
      known = undefined;
      announcedThrough = undefined;
    }
  }

  return {
    /**
     * Takes a stream slot for this token at once, before anything is awaited (events.slots.ts);
     * undefined when none is free. The stream opened with it holds it until it closes;
     * a request that opens none gives it back with release().
     */
    reserve(tokenHash: string): StreamSlot | undefined {
      return closing ? undefined : slots.take(tokenHash);
    },

    /** The position a stream without a cursor starts after: the log's head now. */
    head: () => deps.changes.head(),

    /**
     * Adds a stream whose response head is written; it is sent what changed after `cursor`.
     * Synchronous up to the catch-up, so that a shutdown cannot slip between the response
     * head and the stream's registration.
     */
    async open(q: { user: AuthenticatedUser; tokenHash: string; res: ServerResponse; cursor: number; slot: StreamSlot }): Promise<void> {
      if (closing) {
        q.slot.release();
        q.res.end();
        return;
      }
      const stream: Stream = { user: q.user, tokenHash: q.tokenHash, slot: q.slot, res: q.res, cursor: q.cursor, lastWriteAt: Date.now(), busy: false, closed: false };
      streams.add(stream);
      q.res.once('close', () => {
        stream.closed = true;
        streams.delete(stream);
        stream.slot.release();
      });
      schedule(0);
      heartbeat.start();
      // Catching up from an old cursor starts at once, not at the next tick.
      if (known !== undefined && q.cursor < known) await pump([stream], known).catch((error: unknown) => deps.log.warn({ err: error }, 'event stream: catching up failed'));
    },

    get size() {
      return streams.size;
    },

    /** Ends every stream (shutdown): clients reconnect elsewhere with Last-Event-ID. */
    close() {
      closing = true;
      if (timer !== undefined) clearTimeout(timer);
      heartbeat.stop();
      for (const stream of [...streams]) end(stream);
    },
  };
}
