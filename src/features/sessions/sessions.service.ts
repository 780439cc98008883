import type { Storage } from '../../storage/database.js';
import { type FieldError, forbidden, notFound, validationFailed } from '../../toolkit/errors.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { compareDates } from '../recurrence/recurrence.dates.js';
import { occurrencesBetween, previousOccurrenceBefore } from '../recurrence/recurrence.engine.js';
import { type SessionsContext, createSessionsContext } from './sessions.context.js';
import { checkRange, listSessions } from './sessions.listing.js';
import { type SessionModel, columnsOf, modelFromRow, writableFields } from './sessions.model.js';
import { ONE_OFF, nextOccurrence, occurrenceView, resolveOccurrence, seriesPattern } from './sessions.occurrences.js';
import { type ParticipationAction, participate, participationFor } from './sessions.participation.js';
import { type Item, render } from './sessions.records.js';
import type { SessionWithCreator } from './sessions.repository.js';
import { assertStatusForward, checkSessionRules, isFlagged } from './sessions.rules.js';
import {
  type CreateSessionBody,
  type DeleteSessionQuery,
  type ListSessionsQuery,
  SESSION_DEFAULTS,
  type Session,
  type UpdateSessionBody,
} from './sessions.schema.js';

async function loadVisible(ctx: SessionsContext, user: AuthenticatedUser, id: number): Promise<SessionWithCreator> {
  const row = await ctx.sessions.findVisible(ctx.storage.db, { user, id });
  if (row === undefined) throw notFound('session');
  return row;
}

/**
 * The session with the user's participation. With `date` (a series' occurrence) the
 * record is that occurrence: its instants, status and participants. Without it, the
 * record is the session as stored, with participation in its next occurrence.
 */
async function getSession(ctx: SessionsContext, user: AuthenticatedUser, id: number, date?: string): Promise<Session> {
  const { db } = ctx.storage;
  const row = await loadVisible(ctx, user, id);
  const known = await ctx.sessions.exceptionsOf(db, [id]);
  const exceptions = known.get(id);
  let shown: Item = { row };
  let occurrenceDate: string | null;
  if (date !== undefined) {
    occurrenceDate = resolveOccurrence(row, exceptions, date);
    if (occurrenceDate !== ONE_OFF) shown = { row, occurrence: occurrenceView(row, occurrenceDate) };
  } else {
    const pattern = seriesPattern(row, exceptions);
    occurrenceDate = pattern === null ? ONE_OFF : nextOccurrence(row, pattern);
  }
  const [record] = await render(ctx, db, [shown], { exceptions: known });
  return { ...(record as Session), participation: await participationFor(ctx, db, row, user, occurrenceDate) };
}

/** `schemaErrors`: what the request schema rejected; the remaining fields are still checked so one 422 lists all. */
async function createSession(
  ctx: SessionsContext,
  user: AuthenticatedUser,
  body: CreateSessionBody,
  schemaErrors: readonly FieldError[] = [],
): Promise<Session> {
  const model = { ...SESSION_DEFAULTS, ...writableFields(body, (field) => isFlagged(schemaErrors, field)) } as SessionModel;
  const now = new Date().toISOString();
  const id = await ctx.storage.transaction(async (trx) => {
    const collaboratorIds = await checkSessionRules(ctx, trx, user, model, schemaErrors);
    const newId = await ctx.sessions.insert(trx, { ...columnsOf(model, now), created_by: user.id, created_at: now });
    await ctx.sessions.replaceCollaborators(trx, { sessionId: newId, userIds: collaboratorIds });
    return newId;
  });
  return getSession(ctx, user, id);
}

const sameCollaborators = (a: readonly string[], b: readonly string[]) =>
  JSON.stringify([...new Set(a)].sort()) === JSON.stringify([...new Set(b)].sort());

/**
 * Fields sent replace the stored ones and the merged session must pass every create
 * rule. Sending back what is stored changes nothing, not even updated_at.
 */
async function updateSession(
  ctx: SessionsContext,
  user: AuthenticatedUser,
  id: number,
  body: UpdateSessionBody,
  schemaErrors: readonly FieldError[] = [],
): Promise<Session> {
  await ctx.storage.transaction(async (trx) => {
    const row = await ctx.sessions.findVisible(trx, { user, id });
    if (row === undefined) throw notFound('session');
    if (row.created_by !== user.id) throw forbidden('Only the creator may change this session.');
    const changes = writableFields(body, (field) => isFlagged(schemaErrors, field));
    if (schemaErrors.length === 0 && Object.keys(changes).length === 0) {
      throw validationFailed([{ path: '/', message: 'send at least one writable field' }]);
    }
    const current = modelFromRow(row, (await ctx.sessions.collaboratorHandles(trx, [id])).get(id) ?? []);
    const merged: SessionModel = { ...current, ...changes };
    if (schemaErrors.length === 0) assertStatusForward(current.status, merged.status);
    const collaboratorIds = await checkSessionRules(ctx, trx, user, merged, schemaErrors);
    const columns = columnsOf(merged, row.updated_at);
    const collaboratorsChanged = !sameCollaborators(current.collaborator, merged.collaborator);
    if (!collaboratorsChanged && JSON.stringify(columns) === JSON.stringify(columnsOf(current, row.updated_at))) return;
    await ctx.sessions.update(trx, id, { ...columns, updated_at: new Date().toISOString() });
    if (collaboratorsChanged || merged.org_id !== current.org_id) {
      await ctx.sessions.replaceCollaborators(trx, { sessionId: id, userIds: collaboratorIds });
    }
  });
  return getSession(ctx, user, id);
}

/**
 * scope=series (default) removes the session; tasks keep existing with session_id null
 * (the foreign key says so). For a series, scope=occurrence removes one occurrence and
 * scope=following ends the series before the date (both: default date = next occurrence).
 */
async function deleteSession(ctx: SessionsContext, user: AuthenticatedUser, id: number, query: DeleteSessionQuery): Promise<void> {
  const scope = query.scope ?? 'series';
  await ctx.storage.transaction(async (trx) => {
    const row = await ctx.sessions.findVisible(trx, { user, id });
    if (row === undefined) throw notFound('session');
    if (row.created_by !== user.id) throw forbidden('Only the creator may delete this session.');
    if (scope === 'series') {
      if (query.date !== undefined) throw validationFailed([{ path: '/date', message: 'only applies to scope=occurrence or scope=following' }]);
      await ctx.sessions.delete(trx, id);
      return;
    }
    if (seriesPattern(row) === null) throw validationFailed([{ path: '/scope', message: 'the session is not recurring; use scope=series' }]);
    const exceptions = (await ctx.sessions.exceptionsOf(trx, [id])).get(id);
    const date = resolveOccurrence(row, exceptions, query.date);
    if (scope === 'occurrence') {
      await ctx.sessions.addException(trx, { sessionId: id, date });
      return;
    }
    const pattern = seriesPattern(row, exceptions);
    const previous = pattern === null ? null : previousOccurrenceBefore(pattern, date);
    if (previous === null) {
      await ctx.sessions.delete(trx, id);
      return;
    }
    await ctx.sessions.update(trx, id, { recurring_ends: previous, updated_at: new Date().toISOString() });
    await ctx.participants.deleteFrom(trx, { sessionId: id, date });
  });
}

/** The occurrences of a session in [from, to] (a one-off session: its own day, if inside). */
async function listOccurrences(ctx: SessionsContext, user: AuthenticatedUser, id: number, from: string, to: string) {
  checkRange(from, to, '/to');
  const row = await loadVisible(ctx, user, id);
  const pattern = seriesPattern(row, (await ctx.sessions.exceptionsOf(ctx.storage.db, [id])).get(id));
  const dates =
    pattern !== null
      ? occurrencesBetween(pattern, from, to)
      : compareDates(from, row.schedule) <= 0 && compareDates(row.schedule, to) <= 0
        ? [row.schedule]
        : [];
  return {
    data: dates.map((date) => {
      const { starts_at, ends_at } = occurrenceView(row, date);
      return { occurrence_date: date, starts_at, ends_at };
    }),
  };
}

export type SessionsService = ReturnType<typeof createSessionsService>;

/** Sessions: listing, reading, writing, occurrences and participation. Built once per storage. */
export function createSessionsService(storage: Storage) {
  const ctx = createSessionsContext(storage);
  return {
    list: (user: AuthenticatedUser, query: ListSessionsQuery) => listSessions(ctx, user, query),
    get: (user: AuthenticatedUser, id: number, date?: string) => getSession(ctx, user, id, date),
    create: (user: AuthenticatedUser, body: CreateSessionBody, schemaErrors?: readonly FieldError[]) => createSession(ctx, user, body, schemaErrors),
    update: (user: AuthenticatedUser, id: number, body: UpdateSessionBody, schemaErrors?: readonly FieldError[]) =>
      updateSession(ctx, user, id, body, schemaErrors),
    delete: (user: AuthenticatedUser, id: number, query: DeleteSessionQuery) => deleteSession(ctx, user, id, query),
    occurrences: (user: AuthenticatedUser, id: number, from: string, to: string) => listOccurrences(ctx, user, id, from, to),
    participate: (user: AuthenticatedUser, id: number, action: ParticipationAction, date?: string) => participate(ctx, user, id, action, date),
  };
}
