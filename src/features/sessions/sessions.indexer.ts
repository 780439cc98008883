import type { Db } from '../../storage/database.js';
import type { OccurrenceRow } from '../../storage/tables.js';
import { addDays } from '../recurrence/recurrence.dates.js';
import type { SessionsContext } from './sessions.context.js';
import { FULLY_INDEXED } from './sessions.occurrence-index.js';
import { columnsOf, modelFromRow } from './sessions.model.js';
import { parseOccurrenceKey } from './sessions.participants-repository.js';
import { type IndexedSession, indexFloor, indexHorizon, occurrenceRows, seriesPattern, utcToday } from './sessions.occurrences.js';

const FIRST_DAY = '0001-01-01';
/** The indexer extends a series this many days before its horizon runs out. */
const EXTEND_AHEAD_DAYS = 30;
/** Occurrence rows the indexer holds before writing them. */
const WRITE_ROWS = 20_000;

/**
 * What the index holds through, given the horizon it was built to: everything there will
 * ever be (FULLY_INDEXED) once the horizon reaches a one-off day or a series' end.
 */
function throughFor(session: IndexedSession, horizon: string): string {
  const pattern = seriesPattern(session);
  if (pattern === null) return FULLY_INDEXED;
  return pattern.ends !== null && pattern.ends <= horizon ? FULLY_INDEXED : horizon;
}

/**
 * Rebuilds a session's occurrences in the index, in the caller's transaction: every day
 * from its start (at most INDEX_PAST_DAYS back) through the horizon, removed occurrences
 * left out and host completions kept. Run by every write that changes the session's days, visibility or completion.
 */
export async function reindexSession(ctx: SessionsContext, db: Db, sessionId: number, now = new Date()): Promise<void> {
  const session = await ctx.sessions.find(db, sessionId);
  if (session === undefined) return;
  const [exceptions, completions, overrides] = await Promise.all([
    ctx.sessions.exceptionsOf(db, [sessionId]),
    ctx.participants.hostCompletions(db, { sessionIds: [sessionId], from: FIRST_DAY, to: FULLY_INDEXED }),
    ctx.overrides.of(db, [sessionId]),
  ]);
  const hostCompleted = new Set([...completions].map((key) => parseOccurrenceKey(key).date));
  const horizon = indexHorizon(session, utcToday(now));
  const floor = indexFloor(session, utcToday(now));
  await ctx.index.write(db, {
    replace: [sessionId],
    rows: occurrenceRows(session, exceptions.get(sessionId), hostCompleted, floor ?? FIRST_DAY, horizon, overrides),
    through: new Map([[sessionId, throughFor(session, horizon)]]),
    from: new Map([[sessionId, floor]]),
  });
}

/**
 * One step of the background indexer: builds the index of sessions stored before it
 * existed (recomputing their derived columns) and extends series without an end before
 * their horizon runs out. Returns how many sessions it handled; call again until 0.
 */
export async function indexStep(ctx: SessionsContext, q: { batch: number; now?: Date }): Promise<number> {
  const now = q.now ?? new Date();
  const today = utcToday(now);
  const due = await ctx.sessions.dueForIndexing(ctx.storage.db, { before: addDays(today, EXTEND_AHEAD_DAYS), limit: q.batch });
  if (due.length === 0) return 0;
  await ctx.storage.transaction(async (trx) => {
    const ids = due.map((s) => s.id);
    // Sessions stored before the index: their first-occurrence instants and rrule are derived here too.
    const fresh = due.filter((s) => s.indexed_through === null).map((s) => s.id);
    const [exceptions, completions, stored, overrides] = await Promise.all([
      ctx.sessions.exceptionsOf(trx, ids),
      ctx.participants.hostCompletions(trx, { sessionIds: ids, from: FIRST_DAY, to: FULLY_INDEXED }),
      ctx.sessions.byIds(trx, { ids: fresh }),
      ctx.overrides.of(trx, ids),
    ]);
    const hostCompleted = new Map<number, Set<string>>();
    for (const key of completions) {
      const { sessionId, date } = parseOccurrenceKey(key);
      hostCompleted.set(sessionId, (hostCompleted.get(sessionId) ?? new Set()).add(date));
    }
    // Written in parts of about WRITE_ROWS rows, so that a batch of long series never holds
    // all their occurrences at once.
    const newPart = () => ({ replace: [] as number[], rows: [] as OccurrenceRow[], through: new Map<number, string>(), from: new Map<number, string | null>() });
    let part = newPart();
    for (const session of due) {
      const horizon = indexHorizon(session, today);
      const completed = hostCompleted.get(session.id) ?? new Set<string>();
      if (session.indexed_through === null) {
        const row = stored.get(session.id);
        if (row === undefined) continue;
        const { starts_at, ends_at, rrule } = columnsOf(modelFromRow(row, []), row.updated_at, exceptions.get(session.id));
        await ctx.sessions.update(trx, session.id, { starts_at, ends_at, rrule });
        part.replace.push(session.id);
      }
      let from = addDays(session.indexed_through ?? FIRST_DAY, 1);
      if (session.indexed_through === null) {
        const floor = indexFloor(session, today);
        part.from.set(session.id, floor);
        from = floor ?? FIRST_DAY;
      }
      for (const row of occurrenceRows(session, exceptions.get(session.id), completed, from, horizon, overrides)) part.rows.push(row);
      part.through.set(session.id, throughFor(session, horizon));
      if (part.rows.length >= WRITE_ROWS) {
        await ctx.index.write(trx, part);
        part = newPart();
      }
    }
    await ctx.index.write(trx, part);
  });
  return due.length;
}
