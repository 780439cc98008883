import type { ParticipationAction } from '../../domain/vocabulary.js';
import type { Db, Storage } from '../../storage/database.js';
import type { SessionRow } from '../../storage/tables.js';
import type { Precondition } from '../../toolkit/entity-tags.js';
import { type FieldError, conflict, forbidden, notFound, validationFailed } from '../../toolkit/errors.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { taskChange } from '../../changelog/changelog.repository.js';
import { isOccurrence, nextOccurrenceOnOrAfter, previousOccurrenceBefore } from '../recurrence/recurrence.engine.js';
import { logSessionChange } from './sessions.changes.js';
import { visiblePage, visibleRecords, visibleRecordsForReaders } from './sessions.records.js';
import { type SessionsContext, createSessionsContext } from './sessions.context.js';
import { indexStep, reindexSession } from './sessions.indexer.js';
import { listSessions } from './sessions.listing.js';
import { listOccurrences } from './sessions.occurrence-list.js';
import { editOccurrence, endSeries, splitSeries } from './sessions.occurrence-edit.js';
import { DAY_FIELDS, type SessionModel, columnsOf, modelFromRow, patternOf, writableFields } from './sessions.model.js';
import { ONE_OFF, resolveOccurrence, seriesPattern } from './sessions.occurrences.js';
import { participate } from './sessions.participation-actions.js';
import { type ItemKey, loadItems, occurrenceItem, renderItems } from './sessions.read-model.js';
import { type ListedRow, type PageKey, collaboratorsOf } from './sessions.repository.js';
import { assertStatusForward, checkSessionRules } from './sessions.rules.js';
import { isFlagged } from '../../toolkit/validation.js';
import { type CreateSessionBody, MAX_REMOVED_OCCURRENCES, SESSION_DEFAULTS, type Session, type UpdateSessionBody } from './sessions.schema.js';
import { type DeleteSessionQuery, type ListSessionsQuery, type UpdateSessionQuery } from './sessions.route-schema.js';

/** The record of one item as the user sees it, with participation: what GET answers. */
async function recordOf(ctx: SessionsContext, db: Db, user: AuthenticatedUser, item: ItemKey): Promise<Session> {
  const [record] = renderItems(await loadItems(ctx, db, { user, items: [item], participation: true }), [item], user);
  if (record === undefined) throw notFound('session');
  return record;
}

/**
 * The session with the user's participation. With `date` (a series' occurrence) the
 * record is that occurrence: its instants, status and participants (a one-off session on
 * its own day: itself, with that occurrence_date). Without it, the
 * record is the session as stored, with participation in its next occurrence.
 */
async function getSession(ctx: SessionsContext, user: AuthenticatedUser, id: number, date?: string): Promise<Session> {
  const { db } = ctx.storage;
  const row = await ctx.sessions.findVisible(db, { user, id });
  if (row === undefined) throw notFound('session');
  let item: ItemKey = { id };
  if (date !== undefined) {
    const exceptions = row.is_recurring === 1 ? (await ctx.sessions.exceptionsOf(db, [id])).get(id) : undefined;
    const resolved = resolveOccurrence(row, exceptions, date);
    // A one-off session asked for on its day reads as a dated listing shows it: with its occurrence_date.
    item = await occurrenceItem(ctx, db, row, occurrenceDay(row, resolved));
  }
  return recordOf(ctx, db, user, item);
}

/**
 * Locks the session for a change by its creator and checks the request's precondition
 * (If-Match) against the record GET answers without `date`, as it is under the lock.
 */
async function lockForChange(ctx: SessionsContext, trx: Db, user: AuthenticatedUser, id: number, precondition: Precondition<Session> | undefined, verb: string) {
  const row = await ctx.sessions.lockVisible(trx, { user, id });
  if (row === undefined) throw notFound('session');
  if (row.created_by !== user.id) throw forbidden(`Only the creator may ${verb} this session.`);
  await precondition?.(() => recordOf(ctx, trx, user, { id }));
  return row;
}

/** The columns whose change moves, hides or completes a session's occurrences in the index. */
const INDEXED_COLUMNS = [
  'org_id', 'is_public', 'type', 'status', 'schedule', 'time_minutes', 'duration', 'timezone', 'is_recurring', 'recurring_start',
  'recurring_ends', 'occurrence', 'recurring_days', 'recurring_month_option', 'recurring_month_week_pos', 'recurring_month_week_day',
  'fallback_option',
] as const;

/** The columns a session's dates (its participation keys) follow: not its time, zone or visibility. */
const DAY_COLUMNS = DAY_FIELDS satisfies readonly (typeof INDEXED_COLUMNS)[number][];

/** `schemaErrors`: what the request schema rejected; the remaining fields are still checked so one 422 lists all. */
async function createSession(
  ctx: SessionsContext,
  user: AuthenticatedUser,
  body: CreateSessionBody,
  schemaErrors: readonly FieldError[] = [],
): Promise<Session> {
  // Without a zone of its own, a session takes place where its creator lives (contract section 6).
  const model = { ...SESSION_DEFAULTS, timezone: user.timezone, ...writableFields(body, (field) => isFlagged(schemaErrors, field)) } as SessionModel;
  const now = new Date().toISOString();
  const id = await ctx.storage.transaction(async (trx) => {
    const collaboratorIds = await checkSessionRules(ctx, trx, user, model, schemaErrors);
    const newId = await ctx.sessions.insert(trx, { ...columnsOf(model, now), created_by: user.id, created_at: now });
    await ctx.sessions.replaceCollaborators(trx, { sessionId: newId, userIds: collaboratorIds });
    await reindexSession(ctx, trx, newId);
    await logSessionChange(ctx, trx, { action: 'created', user, now, after: { id: newId, org_id: model.org_id, created_by: user.id } });
    return newId;
  });
  return getSession(ctx, user, id);
}

const sameCollaborators = (a: readonly string[], b: readonly string[]) =>
  JSON.stringify([...new Set(a)].sort()) === JSON.stringify([...new Set(b)].sort());

/**
 * Fields sent replace the stored ones and the merged session must pass every create
 * rule. Sending back what is stored changes nothing, not even updated_at. The row is
 * locked first, so concurrent updates merge into what the one before them committed.
 */
async function updateSession(
  ctx: SessionsContext,
  user: AuthenticatedUser,
  id: number,
  body: UpdateSessionBody,
  schemaErrors: readonly FieldError[] = [],
  precondition?: Precondition<Session>,
): Promise<Session> {
  await ctx.storage.transaction(async (trx) => {
    const row = await lockForChange(ctx, trx, user, id, precondition, 'change');
    await changeSeries(ctx, trx, user, row, body, schemaErrors);
  });
  return getSession(ctx, user, id);
}

/**
 * PUT with `date`: one occurrence (a one-off session's own day: the session), or with
 * scope=following the series from that day on, split into a new one (`created`) unless
 * it is the first occurrence (then the whole series). Answers the record to return.
 */
async function updateDated(
  ctx: SessionsContext,
  user: AuthenticatedUser,
  id: number,
  query: UpdateSessionQuery & { date: string },
  body: UpdateSessionBody,
  schemaErrors: readonly FieldError[],
  precondition?: Precondition<Session>,
): Promise<{ session: Session; created: boolean }> {
  const target = await ctx.storage.transaction(async (trx) => {
    const oneDay = query.scope !== 'following';
    const row = await lockForChange(ctx, trx, user, id, oneDay ? undefined : precondition, 'change');
    // If-Match of one occurrence's edit names what GET ?date= showed.
    // A series' removed days, read once for the precondition and the edit.
    const exceptions = oneDay && row.is_recurring === 1 ? (await ctx.sessions.exceptionsOf(trx, [id])).get(id) : undefined;
    if (oneDay) {
      await precondition?.(async () => recordOf(ctx, trx, user, await occurrenceItem(ctx, trx, row, occurrenceDay(row, resolveOccurrence(row, exceptions, query.date)))));
    }
    if (query.scope === 'following') {
      const newId = await splitSeries(ctx, trx, user, row, query.date, body, schemaErrors);
      if (newId !== undefined) return { id: newId, date: undefined };
    } else if (row.is_recurring === 1) {
      await editOccurrence(ctx, trx, user, { row, exceptions }, query.date, body, schemaErrors);
      return { id, date: query.date };
    } else resolveOccurrence(row, undefined, query.date);
    await changeSeries(ctx, trx, user, row, body, schemaErrors);
    return { id, date: undefined };
  });
  return { session: await getSession(ctx, user, target.id, target.date), created: target.id !== id };
}

/** The day an occurrence key names: a one-off session's own. */
const occurrenceDay = (row: SessionRow, key: string) => (key === ONE_OFF ? row.schedule : key);

/** The whole session changed, on its row locked by the caller. */
async function changeSeries(ctx: SessionsContext, trx: Db, user: AuthenticatedUser, row: ListedRow, body: UpdateSessionBody, schemaErrors: readonly FieldError[]): Promise<void> {
  const { id } = row;
  const changes = writableFields(body, (field) => isFlagged(schemaErrors, field));
  if (schemaErrors.length === 0 && Object.keys(changes).length === 0) {
    throw validationFailed([{ path: '/', message: 'send at least one writable field' }]);
  }
  const current = modelFromRow(row, collaboratorsOf(row));
  const merged: SessionModel = { ...current, ...changes };
  if (schemaErrors.length === 0) assertStatusForward(current.status, merged.status);
  const exceptions = (await ctx.sessions.exceptionsOf(trx, [id])).get(id);
  const collaboratorIds = await checkSessionRules(ctx, trx, user, merged, schemaErrors, exceptions);
  const columns = columnsOf(merged, row.updated_at, exceptions);
  const before = columnsOf(current, row.updated_at, exceptions);
  const collaboratorsChanged = !sameCollaborators(current.collaborator, merged.collaborator);
  if (!collaboratorsChanged && JSON.stringify(columns) === JSON.stringify(before)) return;
  const now = new Date().toISOString();
  await logSessionChange(ctx, trx, { action: 'updated', user, now, before: row, after: { id, org_id: merged.org_id, created_by: row.created_by } });
  await ctx.sessions.update(trx, id, { ...columns, updated_at: now });
  if (collaboratorsChanged || merged.org_id !== current.org_id) {
    await ctx.sessions.replaceCollaborators(trx, { sessionId: id, userIds: collaboratorIds });
  }
  const changed = (c: (typeof INDEXED_COLUMNS)[number]) => JSON.stringify(columns[c]) !== JSON.stringify(before[c]);
  if (DAY_COLUMNS.some(changed)) {
    // Switched off, a series forgets its removed occurrences; joins of days it no longer has go too.
    const switchedOff = current.is_recurring === 1 && merged.is_recurring === 0;
    if (switchedOff && exceptions !== undefined) await ctx.sessions.clearExceptions(trx, id);
    const pattern = patternOf(merged, switchedOff ? undefined : exceptions);
    const exists = (date: string) => (pattern === null ? date === ONE_OFF : date !== ONE_OFF && isOccurrence(pattern, date));
    await ctx.participants.keepOnly(trx, { sessionId: id, exists });
    await ctx.overrides.keepOnly(trx, { sessionId: id, exists });
  }
  if (INDEXED_COLUMNS.some(changed)) await reindexSession(ctx, trx, id);
}

/** Deletes a locked session; its tasks stay with their owners, detached, and each such change is logged. */
async function removeSession(ctx: SessionsContext, trx: Db, user: AuthenticatedUser, row: SessionRow, now: string): Promise<void> {
  await logSessionChange(ctx, trx, { action: 'deleted', user, now, before: row });
  const released = await ctx.sessions.releaseTasks(trx, { sessionId: row.id, now });
  await ctx.changes.record(trx, released.map((t) => taskChange({ id: t.id, action: 'updated', ownerId: t.owner_id, actorId: user.id, now })));
  await ctx.sessions.delete(trx, row.id);
}

/**
 * scope=series (default) removes the session; tasks keep existing with session_id null.
 * For a series, scope=occurrence removes one occurrence and scope=following ends the
 * series before the date (both: default date = next occurrence); either removes the
 * session when no occurrence would be left.
 */
async function deleteSession(
  ctx: SessionsContext,
  user: AuthenticatedUser,
  id: number,
  query: DeleteSessionQuery,
  precondition?: Precondition<Session>,
): Promise<void> {
  const scope = query.scope ?? 'series';
  await ctx.storage.transaction(async (trx) => {
    const row = await lockForChange(ctx, trx, user, id, precondition, 'delete');
    if (scope === 'series') {
      if (query.date !== undefined) throw validationFailed([{ path: '/date', message: 'only applies to scope=occurrence or scope=following' }]);
      await removeSession(ctx, trx, user, row, new Date().toISOString());
      return;
    }
    const pattern = seriesPattern(row);
    if (pattern === null) throw validationFailed([{ path: '/scope', message: 'the session is not recurring; use scope=series' }]);
    const exceptions = (await ctx.sessions.exceptionsOf(trx, [id])).get(id) ?? new Set<string>();
    const date = resolveOccurrence(row, exceptions, query.date);
    const now = new Date().toISOString();
    const model = modelFromRow(row, []);
    if (scope === 'occurrence') {
      const removed = new Set([...exceptions, date]);
      // A series is never left without an occurrence: removing its last one removes it, as scope=following does.
      if (nextOccurrenceOnOrAfter({ ...pattern, exceptions: removed }, pattern.start) === null) {
        await removeSession(ctx, trx, user, row, now);
        return;
      }
      if (exceptions.size >= MAX_REMOVED_OCCURRENCES) {
        throw conflict(
          `A series keeps at most ${MAX_REMOVED_OCCURRENCES} removed occurrences; end it (scope=following) or change its pattern instead.`,
        );
      }
      await logSessionChange(ctx, trx, { action: 'updated', user, now, before: row });
      await ctx.sessions.addException(trx, { sessionId: id, date });
      await ctx.participants.remove(trx, { sessionId: id, date });
      await ctx.overrides.remove(trx, { sessionId: id, date });
      await ctx.index.remove(trx, { sessionId: id, date });
      const { starts_at, ends_at, rrule } = columnsOf(model, now, removed);
      await ctx.sessions.update(trx, id, { starts_at, ends_at, rrule, updated_at: now });
      return;
    }
    const previous = previousOccurrenceBefore({ ...pattern, exceptions }, date);
    if (previous === null) {
      await removeSession(ctx, trx, user, row, now);
      return;
    }
    await endSeries(ctx, trx, { user, row, last: previous, removed: exceptions, now });
    await ctx.participants.deleteFrom(trx, { sessionId: id, date });
    await ctx.overrides.removeFrom(trx, { sessionId: id, from: date });
    await reindexSession(ctx, trx, id);
  });
}

export type SessionsService = ReturnType<typeof createSessionsService>;

/** Sessions: listing, reading, writing, occurrences and participation. Built once per storage (sessions.api.ts). */
export function createSessionsService(storage: Storage) {
  return sessionsServiceOn(createSessionsContext(storage));
}

/** The service over a context already built. */
export function sessionsServiceOn(ctx: SessionsContext) {
  return {
    list: (user: AuthenticatedUser, query: ListSessionsQuery) => listSessions(ctx, user, query),
    get: (user: AuthenticatedUser, id: number, date?: string) => getSession(ctx, user, id, date),
    create: (user: AuthenticatedUser, body: CreateSessionBody, schemaErrors?: readonly FieldError[]) => createSession(ctx, user, body, schemaErrors),
    /** `precondition`: the request's If-Match (`ifMatchOf`), checked under the row lock. */
    update: (user: AuthenticatedUser, id: number, body: UpdateSessionBody, schemaErrors?: readonly FieldError[], precondition?: Precondition<Session>) =>
      updateSession(ctx, user, id, body, schemaErrors, precondition),
    /** PUT with its query: with `date`, one occurrence or (scope=following) a split; `created` when a new series answers. */
    updateIn: async (user: AuthenticatedUser, id: number, query: UpdateSessionQuery, body: UpdateSessionBody, schemaErrors: readonly FieldError[] = [], precondition?: Precondition<Session>) => {
      if (query.scope === 'series' && query.date !== undefined) throw validationFailed([{ path: '/date', message: 'only applies to scope=occurrence or scope=following' }]);
      if (query.date !== undefined) return updateDated(ctx, user, id, { ...query, date: query.date }, body, schemaErrors, precondition);
      if (query.scope !== undefined && query.scope !== 'series') throw validationFailed([{ path: '/date', message: `is required with scope=${query.scope}` }]);
      return { session: await updateSession(ctx, user, id, body, schemaErrors, precondition), created: false };
    },
    delete: (user: AuthenticatedUser, id: number, query: DeleteSessionQuery, precondition?: Precondition<Session>) =>
      deleteSession(ctx, user, id, query, precondition),
    occurrences: (user: AuthenticatedUser, id: number, from: string, to: string) => listOccurrences(ctx, user, id, from, to),
    participate: (user: AuthenticatedUser, id: number, action: ParticipationAction, date?: string) => participate(ctx, user, id, action, date),
    /** One step of the occurrence indexer (see indexStep); the server runs it in the background. */
    indexStep: (batch: number, now?: Date) => indexStep(ctx, { batch, now }),
    /** For the change feed: the current records of those of `ids` the user can see. */
    visibleRecords: (user: AuthenticatedUser, ids: readonly number[]) => visibleRecords(ctx, user, ids),
    /** For the event streams: visibleRecords of many readers, by reader, from one load. */
    visibleRecordsForReaders: (readers: readonly AuthenticatedUser[], ids: readonly number[]) => visibleRecordsForReaders(ctx, readers, ids),
    /** For the change feed's full sync: a page of every session the user can see. */
    visiblePage: (user: AuthenticatedUser, q: { after: PageKey | undefined; limit: number }) => visiblePage(ctx, user, q),
  };
}
