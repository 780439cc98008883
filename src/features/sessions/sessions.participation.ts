import type { Status } from '../../storage/columns.js';
import type { Db } from '../../storage/database.js';
import { conflict, notFound } from '../../toolkit/errors.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import type { SessionsContext } from './sessions.context.js';
import { ONE_OFF, resolveOccurrence } from './sessions.occurrences.js';
import { effectiveStatus } from './sessions.records.js';
import type { SessionWithCreator } from './sessions.repository.js';
import type { Participation } from './sessions.schema.js';

/**
 * The user's participation in one occurrence (ONE_OFF for a one-off session), or with
 * `occurrenceDate` null (a series that has ended) in none. The creator is the host and
 * always counts as joined.
 */
export async function participationFor(
  ctx: SessionsContext,
  db: Db,
  row: SessionWithCreator,
  user: AuthenticatedUser,
  occurrenceDate: string | null,
): Promise<Participation> {
  const p = occurrenceDate === null ? undefined : await ctx.participants.of(db, { sessionId: row.id, date: occurrenceDate, userId: user.id });
  if (row.created_by === user.id) {
    return { joined: true, role: 'host', joined_at: p?.joined_at ?? row.created_at, completed_at: p?.completed_at ?? null };
  }
  const collaborators = (await ctx.sessions.collaboratorHandles(db, [row.id])).get(row.id) ?? [];
  const role = collaborators.includes(user.handle) ? 'collaborator' : p !== undefined ? 'participant' : null;
  return { joined: p !== undefined, role, joined_at: p?.joined_at ?? null, completed_at: p?.completed_at ?? null };
}

/** Status of the occurrence (or one-off session) a participation call is about. */
async function statusOf(ctx: SessionsContext, db: Db, row: SessionWithCreator, occurrenceDate: string): Promise<Status> {
  if (occurrenceDate === ONE_OFF) return row.status;
  const completed = await ctx.participants.hostCompletions(db, { sessionIds: [row.id], from: occurrenceDate, to: occurrenceDate });
  return effectiveStatus(row, occurrenceDate, completed);
}

export type ParticipationAction = 'join' | 'leave' | 'complete';

/**
 * Join (idempotent), leave, or complete one occurrence of a session (`date`; default the
 * next one) or a one-off session. The host completing a one-off session completes it.
 */
export async function participate(ctx: SessionsContext, user: AuthenticatedUser, id: number, action: ParticipationAction, date?: string) {
  const now = new Date().toISOString();
  return ctx.storage.transaction(async (trx) => {
    const row = await ctx.sessions.findVisible(trx, { user, id });
    if (row === undefined) throw notFound('session');
    const exceptions = (await ctx.sessions.exceptionsOf(trx, [id])).get(id);
    const occurrenceDate = resolveOccurrence(row, exceptions, date);
    const isHost = row.created_by === user.id;
    const key = { sessionId: id, date: occurrenceDate, userId: user.id };
    const existing = await ctx.participants.of(trx, key);
    switch (action) {
      case 'join':
        if (isHost || existing !== undefined) break;
        if ((await statusOf(ctx, trx, row, occurrenceDate)) === 'completed') throw conflict('The session is completed; it can no longer be joined.');
        await ctx.participants.join(trx, { ...key, now });
        break;
      case 'leave':
        if (isHost) throw conflict('The host cannot leave; delete the session instead.');
        if (existing?.completed_at != null) throw conflict('You completed this session; completion cannot be undone.');
        await ctx.participants.leave(trx, key);
        break;
      case 'complete':
        if (!isHost && existing === undefined) throw conflict('Join the session before completing it.');
        await ctx.participants.complete(trx, { ...key, now });
        if (isHost && occurrenceDate === ONE_OFF && row.status !== 'completed') {
          await ctx.sessions.update(trx, id, { status: 'completed', updated_at: now });
        }
        break;
      default: {
        const unreachable: never = action;
        throw new Error(`unknown action ${String(unreachable)}`);
      }
    }
    // Not the visible lookup again: leaving may well have made a private session invisible.
    const fresh = await ctx.sessions.find(trx, id);
    if (fresh === undefined) throw notFound('session');
    return {
      data: {
        session_id: id,
        occurrence_date: occurrenceDate === ONE_OFF ? null : occurrenceDate,
        participation: await participationFor(ctx, trx, fresh, user, occurrenceDate),
        status: await statusOf(ctx, trx, fresh, occurrenceDate),
      },
    };
  });
}
