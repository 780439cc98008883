import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { type ChangesService, type PositionedEntry, encodeFeedCursor } from '../changes/changes.service.js';
import type { PositionedChange } from '../../changelog/changelog.repository.js';

/** Feed pages one stream is sent per look while catching up, so one far-behind stream cannot hold a tick. */
export const PAGES_PER_LOOK = 5;
const PAGE = 100;
/**
 * Log rows one look sends to the streams in step with it from one read; more (a burst of
 * writes, a bulk import) go through the paged feed per user, a few pages a look.
 */
export const IN_STEP_ROWS = PAGE * PAGES_PER_LOOK;

/** What one look of the poller covers: the log after `from` up to `through`, and its rows. */
export interface Look {
  from: number;
  through: number;
  rows: readonly PositionedChange[];
}

/** Events' text for a stream, and the cursor it reaches once that text is written. */
export interface Sent {
  text: string;
  cursor: number;
}

const eventOf = ({ entry, position, changedAt }: PositionedEntry) => {
  const id = encodeFeedCursor({ phase: 'log', head: position, issuedAt: Math.min(Date.now(), Date.parse(changedAt)) });
  return `event: change\nid: ${id}\ndata: ${JSON.stringify(entry)}\n\n`;
};

/**
 * What one look holds for a stream (or the streams of one user at one cursor: several
 * devices, several tabs). In step with the poller, the entries the poller read once for
 * every such stream (`inStep`). Otherwise the one catch-up path: the change feed from the
 * stream's cursor (visibility per user), a few pages a look, while `live()`.
 */
export async function* streamChanges(q: {
  user: AuthenticatedUser;
  cursor: number;
  look: Look;
  inStep?: readonly PositionedEntry[];
  feed: ChangesService;
  live: () => boolean;
}): AsyncGenerator<Sent> {
  if (q.inStep !== undefined) {
    yield { text: q.inStep.map(eventOf).join(''), cursor: q.look.through };
    return;
  }
  let cursor = q.cursor;
  // Pages stop once every stream is gone: a closed stream is read for no one.
  for (let pages = 0; pages < PAGES_PER_LOOK && cursor < q.look.through && q.live(); pages++) {
    const page = await q.feed.since(q.user, { after: cursor, upTo: q.look.through, limit: PAGE });
    const moved = page.next.head > cursor;
    if (moved) cursor = page.next.head;
    yield { text: page.entries.map(eventOf).join(''), cursor };
    if (!moved) return;
  }
}
