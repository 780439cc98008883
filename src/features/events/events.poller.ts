import type { Storage } from '../../storage/database.js';
import { concerns, createChangesRepository } from '../../changelog/changelog.repository.js';
import type { ChangesService } from '../changes/changes.service.js';
import { IN_STEP_ROWS, type Look, type Sent, streamChanges } from './events.stream-changes.js';
import type { Stream } from './events.sockets.js';

/** Change rows the poller reads in one look; the rest on the next tick. */
const POLL_BATCH = 5_000;
/** Streams caught up at once after a change (each a few queries): bounded, the pool is shared with requests. */
const CATCH_UP_WIDTH = 8;
/**
 * Users whose records one read serves: each costs some rendering on the event loop, so a
 * thousand users are read in a few rounds, with the loop free between them.
 */
const READERS_PER_READ = 100;

const turn = () => new Promise((resolve) => setImmediate(resolve));
const live = (group: readonly Stream[]) => () => group.some((s) => !s.closed);

/** Streams of one user at one cursor: the feed and the records are read once for them. */
function groupsOf(list: readonly Stream[]): Stream[][] {
  const groups = new Map<string, Stream[]>();
  for (const s of list) {
    const key = `${s.user.id}:${s.user.orgIds.join(',')}:${s.cursor}`;
    groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  return [...groups.values()];
}

/**
 * The change log's poller for an instance's streams: each look reads the log's head and,
 * when it moved, the new rows (one statement for every stream), then drives each stream's
 * generator (events.stream-changes.ts) over them. The streams in step with the previous
 * look are read their records once per 100 users (ChangesService.forReaders); the others
 * catch up through the feed, a few groups at a time.
 */
export function createChangePoller(deps: { storage: Storage; changes: ChangesService; writeAll: (list: readonly Stream[], text: string) => Promise<void> }) {
  const log = createChangesRepository(deps.storage);
  /** The log position the poller has looked at (undefined until its first look). */
  let known: number | undefined;

  async function lookAt(): Promise<Look> {
    const head = await deps.changes.head();
    const from = known ?? head;
    if (head <= from) return { from, through: head, rows: [] };
    const rows = await log.allAfter({ after: from, upTo: head, limit: POLL_BATCH });
    return { from, through: rows.length < POLL_BATCH ? head : (rows.at(-1)?.position ?? head), rows };
  }

  async function deliver(group: readonly Stream[], sent: AsyncGenerator<Sent>): Promise<void> {
    for await (const { text, cursor } of sent) {
      if (text !== '') await deps.writeAll(group, text);
      for (const s of group) s.cursor = cursor;
    }
  }

  async function sendInStep(list: readonly Stream[], look: Look): Promise<void> {
    const groups = groupsOf(list);
    for (let start = 0; start < groups.length; start += READERS_PER_READ) {
      const chunk = groups.slice(start, start + READERS_PER_READ).filter((group) => live(group)());
      if (chunk.length === 0) continue;
      const entries = await deps.changes.forReaders(chunk.map((group) => (group[0] as Stream).user), look.rows);
      for (const [i, group] of chunk.entries()) {
        await deliver(group, streamChanges({ user: (group[0] as Stream).user, cursor: look.from, look, inStep: entries[i] ?? [], feed: deps.changes, live: live(group) }));
      }
      await turn();
    }
  }

  /** A few groups at a time, yielding to the event loop between groups (SQLite's statements run on it). */
  async function catchUp(list: readonly Stream[], look: Look): Promise<void> {
    const queue = groupsOf(list);
    let next = 0;
    const worker = async () => {
      for (let group = queue[next++]; group !== undefined; group = queue[next++]) {
        const lead = group[0] as Stream;
        await deliver(group, streamChanges({ user: lead.user, cursor: lead.cursor, look, feed: deps.changes, live: live(group) }));
        await turn();
      }
    };
    await Promise.all(Array.from({ length: Math.min(CATCH_UP_WIDTH, queue.length) }, worker));
  }

  return {
    /** One look: every open stream is sent what the log holds for it up to the look's end. */
    async follow(streams: Iterable<Stream>): Promise<void> {
      const look = await lookAt();
      const inStep: Stream[] = [];
      const behind: Stream[] = [];
      for (const stream of streams) {
        if (stream.cursor >= look.through) continue;
        // In step with the poller and nothing new concerns it: move on without a query.
        if (stream.cursor >= look.from && !look.rows.some((row) => concerns(stream.user, row))) stream.cursor = look.through;
        else if (stream.cursor === look.from && look.rows.length <= IN_STEP_ROWS) inStep.push(stream);
        else behind.push(stream);
      }
      await sendInStep(inStep, look);
      await catchUp(behind, look);
      known = look.through;
    },
    /** Idle (no stream open): the next look starts at the head. */
    reset() {
      known = undefined;
    },
  };
}
