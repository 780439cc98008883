import { type FieldError, conflict, forbidden, notFound, validationFailed } from '../../http/errors.js';
import type { Storage } from '../../storage/database.js';
import type { AuthenticatedUser } from '../auth/auth.service.js';
import { compareDates } from '../recurrence/recurrence.dates.js';
import { occurrencesBetween, previousOccurrenceBefore } from '../recurrence/recurrence.engine.js';
import { checkRange } from './sessions.listing.js';
import { DEFAULTS, type SessionModel, columnsOf, modelFromRow, writableFields } from './sessions.model.js';
import { ONE_OFF, nextOccurrence, occurrenceView, resolveOccurrence, seriesPattern } from './sessions.occurrences.js';
import { participationFor } from './sessions.participation.js';
import { type Item, render } from './sessions.records.js';
import * as repo from './sessions.repository.js';
import { assertStatusForward, checkSessionRules, isFlagged } from './sessions.rules.js';
import { type CreateSessionBody, type DeleteSessionQuery, MAX_REMOVED_OCCURRENCES, type Session, type UpdateSessionBody } from './sessions.schema.js';

export { listSessions } from './sessions.listing.js';
export { participate } from './sessions.participation.js';

async function loadVisible(storage: Storage, user: AuthenticatedUser, id: number): Promise<repo.SessionWithCreator> {
  const row = await repo.findVisibleSession(storage.db, user, id);
  if (row === undefined) throw notFound('session');
  return row;
}

/**
 * The session with the user's participation. With `date` (a series' occurrence) the
 * record is that occurrence: its instants, status and participants. Without it, the
 * record is the session as stored, with participation in its next occurrence.
 */
export async function getSession(storage: Storage, user: AuthenticatedUser, id: number, date?: string): Promise<Session> {
  const row = await loadVisible(storage, user, id);
  const known = await repo.exceptionsOf(storage.db, [id]);
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
  const [record] = await render(storage.db, [shown], { exceptions: known });
  return { ...(record as Session), participation: await participationFor(storage.db, row, user, occurrenceDate) };
}

/** `schemaErrors`: what the request schema rejected; the remaining fields are still checked so one 422 lists all. */
export async function createSession(
  storage: Storage,
  user: AuthenticatedUser,
  body: CreateSessionBody,
  schemaErrors: readonly FieldError[] = [],
): Promise<Session> {
  const model = { ...DEFAULTS, ...writableFields(body, (field) => isFlagged(schemaErrors, field)) } as SessionModel;
  const now = new Date().toISOString();
  const id = await storage.transaction(async (trx) => {
    const collaboratorIds = await checkSessionRules(trx, user, model, schemaErrors);
    const newId = await repo.insertSession(trx, { ...columnsOf(model, now), created_by: user.id, created_at: now });
    await repo.replaceCollaborators(trx, newId, collaboratorIds);
    return newId;
  });
  return getSession(storage, user, id);
}

const sameCollaborators = (a: readonly string[], b: readonly string[]) =>
  JSON.stringify([...new Set(a)].sort()) === JSON.stringify([...new Set(b)].sort());

/**
 * Fields sent replace the stored ones and the merged session must pass every create
 * rule. Sending back what is stored changes nothing, not even updated_at.
 */
export async function updateSession(
  storage: Storage,
  user: AuthenticatedUser,
  id: number,
  body: UpdateSessionBody,
  schemaErrors: readonly FieldError[] = [],
): Promise<Session> {
  await storage.transaction(async (trx) => {
    const row = await repo.findVisibleSession(trx, user, id);
    if (row === undefined) throw notFound('session');
    if (row.created_by !== user.id) throw forbidden('Only the creator may change this session.');
    const changes = writableFields(body, (field) => isFlagged(schemaErrors, field));
    if (schemaErrors.length === 0 && Object.keys(changes).length === 0) {
      throw validationFailed([{ path: '/', message: 'send at least one writable field' }]);
    }
    const current = modelFromRow(row, (await repo.collaboratorHandles(trx, [id])).get(id) ?? []);
    const merged: SessionModel = { ...current, ...changes };
    if (schemaErrors.length === 0) assertStatusForward(current.status, merged.status);
    const collaboratorIds = await checkSessionRules(trx, user, merged, schemaErrors);
    const columns = columnsOf(merged, row.updated_at);
    const collaboratorsChanged = !sameCollaborators(current.collaborator, merged.collaborator);
    if (!collaboratorsChanged && JSON.stringify(columns) === JSON.stringify(columnsOf(current, row.updated_at))) return;
    await repo.updateSession(trx, id, { ...columns, updated_at: new Date().toISOString() });
    if (collaboratorsChanged || merged.org_id !== current.org_id) await repo.replaceCollaborators(trx, id, collaboratorIds);
  });
  return getSession(storage, user, id);
}

/**
 * scope=series (default) removes the session; tasks keep existing with session_id null
 * (the foreign key says so). For a series, scope=occurrence removes one occurrence and
 * scope=following ends the series before the date (both: default date = next occurrence).
 */
export async function deleteSession(storage: Storage, user: AuthenticatedUser, id: number, query: DeleteSessionQuery): Promise<void> {
  const scope = query.scope ?? 'series';
  await storage.transaction(async (trx) => {
    const row = await repo.findVisibleSession(trx, user, id);
    if (row === undefined) throw notFound('session');
    if (row.created_by !== user.id) throw forbidden('Only the creator may delete this session.');
    if (scope === 'series') {
      if (query.date !== undefined) throw validationFailed([{ path: '/date', message: 'only applies to scope=occurrence or scope=following' }]);
      await repo.deleteSession(trx, id);
      return;
    }
    if (seriesPattern(row) === null) throw validationFailed([{ path: '/scope', message: 'the session is not recurring; use scope=series' }]);
    const exceptions = (await repo.exceptionsOf(trx, [id])).get(id);
    const date = resolveOccurrence(row, exceptions, query.date);
    if (scope === 'occurrence') {
      // Each removed occurrence is repeated in every listed item of the series (`rrule` EXDATE).
      if ((exceptions?.size ?? 0) >= MAX_REMOVED_OCCURRENCES) {
        throw conflict(
          `This series already has ${MAX_REMOVED_OCCURRENCES} removed occurrences, the most one series may have; end it with scope=following and create a new one.`,
        );
      }
      await repo.addException(trx, id, date);
      return;
    }
    const pattern = seriesPattern(row, exceptions);
    const previous = pattern === null ? null : previousOccurrenceBefore(pattern, date);
    if (previous === null) {
      await repo.deleteSession(trx, id);
      return;
    }
    await repo.updateSession(trx, id, { recurring_ends: previous, updated_at: new Date().toISOString() });
    await repo.deleteParticipationFrom(trx, id, date);
  });
}

/** The occurrences of a session in [from, to] (a one-off session: its own day, if inside). */
export async function listOccurrences(storage: Storage, user: AuthenticatedUser, id: number, from: string, to: string) {
  checkRange(from, to, '/to');
  const row = await loadVisible(storage, user, id);
  const pattern = seriesPattern(row, (await repo.exceptionsOf(storage.db, [id])).get(id));
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
