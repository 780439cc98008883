import type { Storage } from '../../storage/database.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { createSessionsContext } from './sessions.context.js';
import { type Crossing, involvedUsers, occurrencesCrossing } from './sessions.occurrence-source.js';
import { createPersonalReads } from './sessions.personal-reads.js';
import { type RecordRequest, recordsAsSeen, recordsAt } from './sessions.records.js';
import { type Reminder, remindersIn } from './sessions.reminders.js';
import { sessionsServiceOn } from './sessions.service.js';

/*
 * The sessions feature's one public face: other features, the app, the server, the CLI and
 * the bench import sessions through this file only (and the wire schema files,
 * sessions.schema.ts and sessions.route-schema.ts); eslint.config.js holds the rule.
 */

export { sessionsRoutes } from './sessions.routes.js';
export type { Session } from './sessions.schema.js';
export type { Crossing, RecordRequest, Reminder };
export { involvedUsers };
/** The columns a session's writable state is stored as: for writing rows outside a request (the bench's seeder). */
export { type SessionModel, columnsOf as sessionColumns } from './sessions.model.js';
/** Whether the user can see the session (a task's link to it). */
export { isSessionVisible } from './sessions.visibility.js';
/** Participation history for statistics: joined and completed occurrences of users in a range; every completed start of one user. */
export { type ParticipationRecord, completedStarts, participationHistory } from './sessions.history.js';

function build(storage: Storage) {
  const ctx = createSessionsContext(storage);
  const personal = createPersonalReads(storage, ctx.sessions);
  return {
    ...sessionsServiceOn(ctx),
    /**
     * Records as given readers see them, batched: each what GET /sessions/{id}?date=
     * answers its reader, undefined where that is 404 (webhooks).
     */
    recordsAsSeen: (requests: readonly RecordRequest[]) => recordsAsSeen(ctx, requests),
    /** Which of `ids` still exist, whoever may see them. */
    existing: (ids: readonly number[]) => ctx.sessions.existing(ctx.storage.db, ids),
    /** /me/now: the user's occurrences running at `clock` (at most `limit`) and the next, as dated listings show them. */
    recordsAt: (user: AuthenticatedUser, clock: Date, limit: number) => recordsAt(ctx, user, clock, limit),
    /** Occurrences that started or ended in (from, to], with who is involved (the event stream, the webhook clock). */
    crossing: (q: { from: string; to: string; limit?: number }) => occurrencesCrossing(ctx, q),
    /** Reminders (`session.starting`) due in (from, to]: per occurrence, person involved and offset (the event stream, the webhook clock). */
    remindersIn: (q: { from: string; to: string }) => remindersIn(ctx, q),
    /** What a calendar feed shows of the user's sessions (rows with their rrule), and their versions. */
    feedSessions: (user: AuthenticatedUser, limit: number) => personal.sessionsOf(user, limit),
    feedVersions: (user: AuthenticatedUser, limit: number) => personal.versionsOf(user, limit),
  };
}

export type SessionsApi = ReturnType<typeof build>;
/** The service's name where only its operations matter (routes, the change feed). */
export type SessionsService = SessionsApi;

const built = new WeakMap<Storage, SessionsApi>();

/** The sessions feature on a storage: built once per storage (its repositories and their statement caches with it). */
export function sessionsApi(storage: Storage): SessionsApi {
  let api = built.get(storage);
  if (api === undefined) built.set(storage, (api = build(storage)));
  return api;
}
