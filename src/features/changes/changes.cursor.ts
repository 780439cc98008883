import { syncExpired, validationFailed } from '../../toolkit/errors.js';
import { decodeCursor, encodeCursor } from '../../toolkit/paging.js';
import type { ChangeEntry } from './changes.schema.js';

/** A cursor is honoured this long; the log keeps changes a day longer (server.jobs.ts CHANGE_RETENTION_MS). */
export const CURSOR_VALIDITY_MS = 7 * 86_400_000;

/** Where a reader is: in a full sync (its own place, and the log's head when it began), or following the log. */
export type FeedPosition =
  | { phase: 'sessions' | 'tasks'; head: number; startsAt: string; id: number; issuedAt: number }
  | { phase: 'log'; head: number; issuedAt: number };

const PHASES = ['sessions', 'tasks', 'log'] as const;

export function encodeFeedCursor(p: FeedPosition): string {
  return p.phase === 'log'
    ? encodeCursor([p.head, 2, '', 0, p.issuedAt])
    : encodeCursor([p.head, PHASES.indexOf(p.phase), p.startsAt, p.id, p.issuedAt]);
}

/** The cursor's position, or 422 for one the feed did not issue, or 410 for one older than the log keeps. */
export function decodeFeedCursor(cursor: string, now = Date.now()): FeedPosition {
  const [head, phase, startsAt, id, issuedAt] = decodeCursor(cursor, ['number', 'number', 'string', 'number', 'number'] as const);
  const name = PHASES[phase];
  if (name === undefined || head < 0 || id < 0 || issuedAt <= 0) throw validationFailed([{ path: '/cursor', message: 'is not a cursor this listing issued' }]);
  if (now - issuedAt > CURSOR_VALIDITY_MS) throw syncExpired();
  return name === 'log' ? { phase: name, head, issuedAt } : { phase: name, head, startsAt, id, issuedAt };
}

/** One entry of a page, with the log position after which it was read (the SSE `id`). */
export interface PositionedEntry {
  entry: ChangeEntry;
  position: number;
  /** When the change at `position` was made: how old a cursor there is. */
  changedAt: string;
}

export interface FeedPage {
  entries: PositionedEntry[];
  next: FeedPosition;
}
