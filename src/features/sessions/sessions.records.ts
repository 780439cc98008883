import type { Status } from '../../storage/columns.js';
import type { Db } from '../../storage/database.js';
import type { SessionRow } from '../../storage/tables.js';
import type { SessionsContext } from './sessions.context.js';
import { modelFromRow, toSession } from './sessions.model.js';
import { ONE_OFF, type OccurrenceView, nextOccurrence, seriesPattern } from './sessions.occurrences.js';
import { type SessionWithCreator, occurrenceKey } from './sessions.repository.js';
import type { Session } from './sessions.schema.js';

/** A session to show: the session itself, or (in dated listings) one of its days. */
export interface Item {
  row: SessionWithCreator;
  occurrence?: OccurrenceView;
}

/**
 * The status of a session, or of one occurrence of a series: a series occurrence is
 * completed when its host completed it (or the whole series is completed).
 */
export function effectiveStatus(row: Pick<SessionRow, 'id' | 'is_recurring' | 'status'>, date: string | undefined, hostCompleted: ReadonlySet<string>): Status {
  if (row.is_recurring === 1 && date !== undefined && hostCompleted.has(occurrenceKey(row.id, date))) return 'completed';
  return row.status;
}

/**
 * The occurrence whose participants an item counts: a one-off session's only one, the
 * item's occurrence, or for a series shown as a whole its next occurrence (null: ended).
 */
function countedOccurrence(item: Item, exceptions: ReadonlySet<string> | undefined): string | null {
  if (item.row.is_recurring !== 1) return ONE_OFF;
  if (item.occurrence !== undefined) return item.occurrence.date;
  const pattern = seriesPattern(item.row, exceptions);
  return pattern === null ? ONE_OFF : nextOccurrence(item.row, pattern);
}

/**
 * What a caller that expanded or resolved occurrences has already read, so that it is not
 * read twice: the series' exceptions, and the host completions of the shown series over
 * (at least) the shown dates.
 */
export interface KnownState {
  exceptions?: ReadonlyMap<number, Set<string>>;
  hostCompleted?: ReadonlySet<string>;
}

/** Builds the API records for a page of items with a fixed number of queries. */
export async function render(ctx: SessionsContext, db: Db, items: readonly Item[], known: KnownState = {}): Promise<Session[]> {
  const ids = items.map((i) => i.row.id);
  const seriesIds = items.filter((i) => i.row.is_recurring === 1).map((i) => i.row.id);
  const exceptions = known.exceptions ?? (await ctx.sessions.exceptionsOf(db, seriesIds));
  const shown = items.map((item) => ({ item, counted: countedOccurrence(item, exceptions.get(item.row.id)) }));
  const countKeys = shown.flatMap(({ item, counted }) => (counted === null ? [] : [{ sessionId: item.row.id, occurrenceDate: counted }]));
  const dates = items.flatMap((i) => (i.occurrence === undefined ? [] : [i.occurrence.date])).sort();
  const [collaborators, counts, hostCompleted] = await Promise.all([
    ctx.sessions.collaboratorHandles(db, ids),
    ctx.participants.counts(db, countKeys),
    known.hostCompleted ??
      (dates.length === 0
        ? new Set<string>()
        : ctx.participants.hostCompletions(db, { sessionIds: seriesIds, from: dates[0] as string, to: dates.at(-1) as string })),
  ]);
  return shown.map(({ item: { row, occurrence }, counted }) => {
    const sessionExceptions = exceptions.get(row.id);
    return toSession(modelFromRow(row, collaborators.get(row.id) ?? []), {
      id: row.id,
      createdBy: row.creator_handle,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      // The host always counts as joined.
      participantsCount: 1 + (counted === null ? 0 : (counts.get(occurrenceKey(row.id, counted)) ?? 0)),
      exceptions: sessionExceptions,
      ...(occurrence === undefined ? {} : { occurrence: { ...occurrence, status: effectiveStatus(row, occurrence.date, hostCompleted) } }),
    });
  });
}
