import { conflict, notFound } from '../../http/errors.js';
import type { Db, Storage } from '../../storage/database.js';
import type { AuthenticatedUser } from '../auth/auth.service.js';
import { ONE_OFF, resolveOccurrence } from './sessions.occurrences.js';
import { effectiveStatus } from './sessions.records.js';
import * as repo from './sessions.repository.js';
import type { Participation, Status } from './sessions.schema.js';

/**
 * The user's participation in one occurrence (ONE_OFF for a one-off session), or with
 * `occurrenceDate` null (a series that has ended) in none. The creator is the host and
 * always counts as joined.
 */
export async function participationFor(
  db: Db,
  row: repo.SessionWithCreator,
  user: AuthenticatedUser,
  occurrenceDate: string | null,
): Promise<Participation> {
  const p = occurrenceDate === null ? undefined : await repo.participationOf(db, row.id, occurrenceDate, user.id);
  if (row.created_by === user.id) {
    // The host joined when the session was created; completing adds a row but never moves that (contract section 6).
    return { joined: true, role: 'host', joined_at: row.created_at, completed_at: p?.completed_at ?? null };
  }
  const collaborators = (await repo.collaboratorHandles(db, [row.id])).get(row.id) ?? [];
  const role = collaborators.includes(user.handle) ? 'collaborator' : p !== undefined ? 'participant' : null;
  return { joined: p !== undefined, role, joined_at: p?.joined_at ?? null, completed_at: p?.completed_at ?? null };
}

/** Status of the occurrence (or one-off session) a participation call is about. */
async function statusOf(db: Db, row: repo.SessionWithCreator, occurrenceDate: string): Promise<Status> {
  if (occurrenceDate === ONE_OFF) return row.status as Status;
  return effectiveStatus(row, occurrenceDate, await repo.hostCompletions(db, [row.id], occurrenceDate, occurrenceDate));
}

export type ParticipationAction = 'join' | 'leave' | 'complete';

/**
 * Join (idempotent), leave, or complete one occurrence of a session (`date`; default the
 * next one) or a one-off session. The host completing a one-off session completes it.
 */
export async function participate(storage: Storage, user: AuthenticatedUser, id: number, action: ParticipationAction, date?: string) {
  const now = new Date().toISOString();
  return storage.transaction(async (trx) => {
    const row = await repo.findVisibleSession(trx, user, id);
    if (row === undefined) throw notFound('session');
    const exceptions = (await repo.exceptionsOf(trx, [id])).get(id);
    const occurrenceDate = resolveOccurrence(row, exceptions, date);
    const isHost = row.created_by === user.id;
    const existing = await repo.participationOf(trx, id, occurrenceDate, user.id);
    switch (action) {
      case 'join':
        if (isHost || existing !== undefined) break;
        if ((await statusOf(trx, row, occurrenceDate)) === 'completed') throw conflict('The session is completed; it can no longer be joined.');
        await repo.join(trx, id, occurrenceDate, user.id, now);
        break;
      case 'leave':
        if (isHost) throw conflict('The host cannot leave; delete the session instead.');
        if (existing?.completed_at != null) throw conflict('You completed this session; completion cannot be undone.');
        await repo.leave(trx, id, occurrenceDate, user.id);
        break;
      case 'complete':
        if (!isHost && existing === undefined) throw conflict('Join the session before completing it.');
        await repo.complete(trx, id, occurrenceDate, user.id, now);
        if (isHost && occurrenceDate === ONE_OFF && row.status !== 'completed') {
          await repo.updateSession(trx, id, { status: 'completed', updated_at: now });
        }
        break;
      default: {
        const unreachable: never = action;
        throw new Error(`unknown action ${String(unreachable)}`);
      }
    }
    // Not the visible lookup again: leaving may well have made a private session invisible.
    const fresh = await repo.findSession(trx, id);
    if (fresh === undefined) throw notFound('session');
    return {
      data: {
        session_id: id,
        occurrence_date: occurrenceDate === ONE_OFF ? null : occurrenceDate,
        participation: await participationFor(trx, fresh, user, occurrenceDate),
        status: await statusOf(trx, fresh, occurrenceDate),
      },
    };
  });
}
