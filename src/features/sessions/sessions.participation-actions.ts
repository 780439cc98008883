import type { ParticipationAction, Status } from '../../domain/vocabulary.js';
import { conflict, notFound, notStarted } from '../../toolkit/errors.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { logSessionChange } from './sessions.changes.js';
import type { SessionsContext } from './sessions.context.js';
import { ONE_OFF, occurrenceView, resolveOccurrence } from './sessions.occurrences.js';
import { occurrenceKey } from './sessions.participants-repository.js';
import { loadItems, occurrenceItem, renderItems } from './sessions.read-model.js';
import type { Participation } from './sessions.schema.js';

/**
 * Join (idempotent), leave, or complete one occurrence of a session (`date`; default the
 * next one) or a one-off session. The host completing a one-off session completes it. The
 * session row is locked first, so concurrent calls about it take turns: a `leave` that
 * comes after a `complete` finds the completion and is refused.
 */
export async function participate(ctx: SessionsContext, user: AuthenticatedUser, id: number, action: ParticipationAction, date?: string) {
  const now = new Date().toISOString();
  return ctx.storage.transaction(async (trx) => {
    const row = await ctx.sessions.lockVisible(trx, { user, id });
    if (row === undefined) throw notFound('session');
    const exceptions = (await ctx.sessions.exceptionsOf(trx, [id])).get(id);
    const occurrenceDate = resolveOccurrence(row, exceptions, date);
    const isHost = row.created_by === user.id;
    const key = { sessionId: id, date: occurrenceDate, userId: user.id };
    const existing = await ctx.participants.of(trx, key);
    // Participant counts are part of the session's record: every join, leave and complete changes it.
    const logged = () => logSessionChange(ctx, trx, { action: 'participation', participation: { action, date: occurrenceDate }, user, now, before: row });
    switch (action) {
      case 'join': {
        if (isHost || existing !== undefined) break;
        const { occurrence } = await occurrenceItem(ctx, trx, row, occurrenceDate);
        if ((occurrence?.completed ?? row.status === 'completed') === true) throw conflict('The session is completed; it can no longer be joined.');
        await logged();
        await ctx.participants.join(trx, { ...key, now });
        break;
      }
      case 'leave':
        if (isHost) throw conflict('The host cannot leave; delete the session instead.');
        if (existing?.completed_at != null) throw conflict('You completed this session; completion cannot be undone.');
        if (existing !== undefined) await logged();
        await ctx.participants.leave(trx, key);
        break;
      case 'complete': {
        if (!isHost && existing === undefined) throw conflict('Join the session before completing it.');
        // An edited occurrence starts when its override says.
        const fields = occurrenceDate === ONE_OFF ? undefined : (await ctx.overrides.at(trx, [{ sessionId: id, date: occurrenceDate }])).get(occurrenceKey(id, occurrenceDate));
        const startsAt = occurrenceDate === ONE_OFF ? row.starts_at : occurrenceView(row, occurrenceDate, fields).starts_at;
        if (now < startsAt) throw notStarted(startsAt);
        if (existing?.completed_at == null) await logged();
        await ctx.participants.complete(trx, { ...key, now });
        if (isHost && occurrenceDate === ONE_OFF && row.status !== 'completed') {
          await ctx.sessions.update(trx, id, { status: 'completed', updated_at: now });
          await ctx.index.complete(trx, { sessionId: id });
        } else if (isHost && occurrenceDate !== ONE_OFF) {
          await ctx.index.complete(trx, { sessionId: id, date: occurrenceDate });
        }
        break;
      }
      default: {
        const unreachable: never = action;
        throw new Error(`unknown action ${String(unreachable)}`);
      }
    }
    // Read back whatever its visibility now: leaving may well have made a private session invisible.
    const fresh = await ctx.sessions.find(trx, id);
    if (fresh === undefined) throw notFound('session');
    const item = await occurrenceItem(ctx, trx, fresh, occurrenceDate);
    const [record] = renderItems(await loadItems(ctx, trx, { user, items: [item], participation: true }), [item], user);
    if (record?.participation === undefined) throw notFound('session');
    return {
      data: {
        session_id: id,
        occurrence_date: occurrenceDate === ONE_OFF ? null : occurrenceDate,
        participation: record.participation satisfies Participation,
        status: record.status satisfies Status,
      },
    };
  });
}
