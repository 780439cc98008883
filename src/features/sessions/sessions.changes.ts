import { toJson } from '../../storage/columns.js';
import type { Audience, ChangeAction, ParticipationAction } from '../../domain/vocabulary.js';
import type { Db } from '../../storage/database.js';
import type { NewChange, SessionRow } from '../../storage/tables.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import type { SessionsContext } from './sessions.context.js';
import { ONE_OFF } from './sessions.occurrences.js';

/** The audience a session had in an org it was not in: nobody saw it there. */
const NOBODY: Audience = { public: false, users: [] };

/** A participation change names what was done and to which occurrence (ONE_OFF: a one-off session). */
type Logged =
  | { action: Exclude<ChangeAction, 'participation'>; occurrenceDate?: string }
  | { action: 'participation'; participation: { action: ParticipationAction; date: string } };

/**
 * Records a change of a session in the change log, in the caller's transaction. `before`
 * is the row as it was (undefined for a new session): its org and audience tell a reader
 * who loses sight of the session that it is gone. A session moved to another org is
 * logged under both, and its audience only under the org it left: no member of the new org
 * saw it there, so none is told it is gone (contract section 13); one who saw it in the old
 * org is told through that entry. A participation change keeps what was done to which occurrence: the
 * webhook built from it later (webhooks.fanout.ts) could not tell it from the rows by then.
 */
export async function logSessionChange(
  ctx: SessionsContext,
  db: Db,
  q: Logged & { user: AuthenticatedUser; now: string; before?: SessionRow; after?: Pick<SessionRow, 'id' | 'org_id' | 'created_by'> },
): Promise<void> {
  const row = q.before ?? q.after;
  if (row === undefined) return;
  const audience: Audience | undefined = q.before === undefined ? undefined : await ctx.sessions.audienceOf(db, q.before);
  const detail = q.action === 'participation' ? q.participation : undefined;
  const edited = q.action === 'participation' ? null : (q.occurrenceDate ?? null);
  const entry = (orgId: number): NewChange => ({
    kind: 'session',
    action: q.action,
    record_id: row.id,
    org_id: orgId,
    owner_id: row.created_by,
    audience: audience === undefined ? null : toJson(orgId === q.before?.org_id ? audience : NOBODY),
    actor_id: q.user.id,
    changed_at: q.now,
    participation: detail?.action ?? null,
    // A participation's occurrence, or the one an occurrence edit changed.
    occurrence_date: detail === undefined ? edited : detail.date === ONE_OFF ? null : detail.date,
  });
  const orgs = new Set([row.org_id, ...(q.after === undefined ? [] : [q.after.org_id])]);
  await ctx.changes.record(db, [...orgs].map(entry));
}
