import { FieldErrors, conflict, forbidden, notFound, validationFailed } from '../../http/errors.js';
import { decodeCursor, encodeCursor } from '../../http/paging.js';
import type { Db, Storage } from '../../storage/database.js';
import { membersByHandle } from '../auth/auth.repository.js';
import type { AuthenticatedUser } from '../auth/auth.service.js';
import { addDays, compareDates, daysBetween } from '../recurrence/recurrence.dates.js';
import { isOccurrence, nextOccurrenceOnOrAfter, occurrencesBetween, previousOccurrenceBefore } from '../recurrence/recurrence.engine.js';
import { isValidTimeZone, occurrenceInstants, todayIn } from '../recurrence/recurrence.time.js';
import { DEFAULTS, type SessionModel, columnsOf, modelFromRow, patternOf, toSession, writableFields } from './sessions.model.js';
import * as repo from './sessions.repository.js';
import type {
  CreateSessionBody,
  DeleteSessionQuery,
  ListSessionsQuery,
  Participation,
  Session,
  Status,
  UpdateSessionBody,
} from './sessions.schema.js';
import { STATUSES } from './sessions.schema.js';

export const MAX_RANGE_DAYS = 366;

/** Every rule that spans fields, on the merged session; collaborators must be members of its org. */
async function validateModel(db: Db, user: AuthenticatedUser, m: SessionModel): Promise<number[]> {
  if (!user.orgIds.includes(m.org_id)) throw forbidden('You can only place sessions in an organization you belong to.');
  const errors = new FieldErrors();
  if (!isValidTimeZone(m.timezone)) errors.add('/timezone', 'is not an IANA time zone');
  if (m.is_recurring === 1 && m.occurrence === null) errors.add('/occurrence', 'is required when is_recurring is 1');
  const start = m.recurring_start ?? m.schedule;
  if (m.recurring_ends !== null && compareDates(m.recurring_ends, start) < 0) {
    errors.add('/recurring_ends', `must be on or after the recurrence start (${start})`);
  }
  const members = await membersByHandle(db, m.org_id, m.collaborator);
  m.collaborator.forEach((handle, i) => {
    if (!members.has(handle)) errors.add(`/collaborator/${i}`, `${handle} is not a member of org ${m.org_id}`);
  });
  errors.throwIfAny();
  return m.collaborator.map((h) => members.get(h) as number);
}

const statusRank = (s: Status) => STATUSES.indexOf(s);

function rangeOf(query: ListSessionsQuery): { from: string; to: string } | undefined {
  const errors = new FieldErrors();
  if (query.date !== undefined && (query.day_start !== undefined || query.day_ends !== undefined)) {
    errors.add('/date', 'use either date or day_start/day_ends, not both');
  }
  if (query.day_ends !== undefined && query.day_start === undefined) errors.add('/day_start', 'is required with day_ends');
  errors.throwIfAny();
  if (query.date !== undefined) return { from: query.date, to: query.date };
  if (query.day_start === undefined) return undefined;
  const to = query.day_ends ?? addDays(query.day_start, MAX_RANGE_DAYS - 1);
  checkRange(query.day_start, to, '/day_ends');
  return { from: query.day_start, to };
}

function checkRange(from: string, to: string, path: string): void {
  if (compareDates(to, from) < 0) throw validationFailed([{ path, message: 'must not be before the start of the range' }]);
  if (daysBetween(from, to) + 1 > MAX_RANGE_DAYS) {
    throw validationFailed([{ path, message: `the range covers at most ${MAX_RANGE_DAYS} days` }]);
  }
}

interface Item {
  row: repo.SessionWithCreator;
  occurrence?: { date: string; starts_at: string; ends_at: string };
}

const itemKey = (i: Item) => ({ startsAt: i.occurrence?.starts_at ?? i.row.starts_at, id: i.row.id });
const before = (a: { startsAt: string; id: number }, b: { startsAt: string; id: number }) =>
  a.startsAt < b.startsAt || (a.startsAt === b.startsAt && a.id < b.id);

/** Builds API records for a page of items with a fixed number of queries. */
async function render(db: Db, items: Item[]): Promise<Session[]> {
  const ids = items.map((i) => i.row.id);
  const seriesIds = items.filter((i) => i.row.is_recurring === 1).map((i) => i.row.id);
  const [collaborators, exceptions, counts, completions] = await Promise.all([
    repo.collaboratorHandles(db, ids),
    repo.exceptionsOf(db, seriesIds),
    repo.participantCounts(
      db,
      items.map((i) => ({ sessionId: i.row.id, occurrenceDate: i.occurrence?.date ?? '' })),
    ),
    repo.hostCompletions(db, seriesIds),
  ]);
  return items.map(({ row, occurrence }) => {
    const key = repo.occurrenceKey(row.id, occurrence?.date ?? '');
    const model = modelFromRow(row, collaborators.get(row.id) ?? []);
    return toSession(model, {
      id: row.id,
      createdBy: row.creator_handle,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      participantsCount: 1 + (counts.get(key) ?? 0),
      exceptions: exceptions.get(row.id),
      ...(occurrence === undefined
        ? {}
        : { occurrence: { ...occurrence, status: completions.has(key) ? ('completed' as const) : (row.status as Status) } }),
    });
  });
}

export async function listSessions(storage: Storage, user: AuthenticatedUser, query: ListSessionsQuery) {
  if (query.org_id !== undefined && !user.orgIds.includes(query.org_id)) {
    throw validationFailed([{ path: '/org_id', message: 'is not one of your organizations' }]);
  }
  const range = rangeOf(query);
  const limit = query.limit ?? 100;
  const after = query.cursor === undefined ? undefined : (([startsAt, id]) => ({ startsAt, id }))(decodeCursor(query.cursor, ['string', 'number'] as const));
  const filters: repo.SessionFilters = {
    orgIds: query.org_id === undefined ? user.orgIds : [query.org_id],
    channel: query.channel,
    type: query.type,
    completed: query.completed,
    source: query.source,
    keyword: query.keyword,
  };
  let items: Item[];
  if (range === undefined) {
    items = (await repo.listSessions(storage.db, storage.dialect, user, filters, after, limit + 1)).map((row) => ({ row }));
  } else {
    const [oneOff, series] = await Promise.all([
      repo.listOneOffInRange(storage.db, storage.dialect, user, filters, range.from, range.to, after, limit + 1),
      repo.listSeriesOverlapping(storage.db, storage.dialect, user, filters, range.from, range.to),
    ]);
    items = oneOff.map((row) => ({ row, occurrence: { date: row.schedule, starts_at: row.starts_at, ends_at: row.ends_at } }));
    const exceptions = await repo.exceptionsOf(storage.db, series.map((s) => s.id));
    for (const row of series) {
      const pattern = patternOf(modelFromRow(row, []), exceptions.get(row.id));
      if (pattern === null) continue;
      for (const date of occurrencesBetween(pattern, range.from, range.to)) {
        const occurrence = { date, ...occurrenceInstants(date, row.time_minutes, row.duration, row.timezone) };
        const item = { row, occurrence };
        if (after === undefined || before(after, itemKey(item))) items.push(item);
      }
    }
    items.sort((a, b) => (before(itemKey(a), itemKey(b)) ? -1 : before(itemKey(b), itemKey(a)) ? 1 : 0));
  }
  const page = items.slice(0, limit);
  const last = page.at(-1);
  return {
    data: await render(storage.db, page),
    next_cursor: items.length > limit && last !== undefined ? encodeCursor([itemKey(last).startsAt, itemKey(last).id]) : null,
  };
}

async function loadVisible(storage: Storage, user: AuthenticatedUser, id: number) {
  const row = await repo.findVisibleSession(storage.db, user, id);
  if (row === undefined) throw notFound('session');
  return row;
}

/** The occurrence a participation call refers to: '' for a one-off session. */
function occurrenceFor(row: repo.SessionWithCreator, model: SessionModel, exceptions: ReadonlySet<string> | undefined, date: string | undefined): string {
  const pattern = patternOf(model, exceptions);
  if (pattern === null) {
    if (date !== undefined && date !== model.schedule) throw notFound('occurrence');
    return '';
  }
  if (date !== undefined) {
    if (!isOccurrence(pattern, date)) throw notFound('occurrence');
    return date;
  }
  const next = nextOccurrenceOnOrAfter(pattern, todayIn(row.timezone));
  if (next === null) throw notFound('occurrence');
  return next;
}

async function participationFor(db: Db, row: repo.SessionWithCreator, model: SessionModel, user: AuthenticatedUser, occurrenceDate: string): Promise<Participation> {
  const p = await repo.participationOf(db, row.id, occurrenceDate, user.id);
  if (row.created_by === user.id) {
    return { joined: true, role: 'host', joined_at: p?.joined_at ?? row.created_at, completed_at: p?.completed_at ?? null };
  }
  const role = model.collaborator.includes(user.handle) ? 'collaborator' : p !== undefined ? 'participant' : null;
  return { joined: p !== undefined, role, joined_at: p?.joined_at ?? null, completed_at: p?.completed_at ?? null };
}

export async function getSession(storage: Storage, user: AuthenticatedUser, id: number, date?: string): Promise<Session> {
  const row = await loadVisible(storage, user, id);
  const collaborators = (await repo.collaboratorHandles(storage.db, [id])).get(id) ?? [];
  const exceptions = (await repo.exceptionsOf(storage.db, [id])).get(id);
  const model = modelFromRow(row, collaborators);
  let occurrenceDate: string | null;
  try {
    occurrenceDate = occurrenceFor(row, model, exceptions, date);
  } catch (error) {
    // A finished series still has a record; only an explicit bad date is 404.
    if (date !== undefined) throw error;
    occurrenceDate = null;
  }
  const [rendered] = await render(storage.db, [
    occurrenceDate === null || occurrenceDate === ''
      ? { row }
      : { row, occurrence: { date: occurrenceDate, ...occurrenceInstants(occurrenceDate, row.time_minutes, row.duration, row.timezone) } },
  ]);
  const participation =
    occurrenceDate === null
      ? await participationFor(storage.db, row, model, user, '\u0000none')
      : await participationFor(storage.db, row, model, user, occurrenceDate);
  return { ...(rendered as Session), participation };
}

export async function createSession(storage: Storage, user: AuthenticatedUser, body: CreateSessionBody): Promise<Session> {
  const model = { ...DEFAULTS, ...writableFields(body) } as SessionModel;
  const now = new Date().toISOString();
  const id = await storage.transaction(async (trx) => {
    const collaboratorIds = await validateModel(trx, user, model);
    const newId = await repo.insertSession(trx, { ...columnsOf(model, now), created_by: user.id, created_at: now });
    await repo.replaceCollaborators(trx, newId, collaboratorIds);
    return newId;
  });
  return getSession(storage, user, id);
}

export async function updateSession(storage: Storage, user: AuthenticatedUser, id: number, body: UpdateSessionBody): Promise<Session> {
  const changes = writableFields(body);
  if (Object.keys(changes).length === 0) throw validationFailed([{ path: '/', message: 'send at least one writable field' }]);
  await storage.transaction(async (trx) => {
    const row = await repo.findVisibleSession(trx, user, id);
    if (row === undefined) throw notFound('session');
    if (row.created_by !== user.id) throw forbidden('Only the creator may change this session.');
    const current = modelFromRow(row, (await repo.collaboratorHandles(trx, [id])).get(id) ?? []);
    const merged: SessionModel = { ...current, ...changes };
    if (statusRank(merged.status) < statusRank(current.status)) {
      throw conflict(`Status moves only forward; it is ${current.status} and cannot become ${merged.status}.`);
    }
    const collaboratorIds = await validateModel(trx, user, merged);
    await repo.updateSession(trx, id, columnsOf(merged, new Date().toISOString()));
    if (changes.collaborator !== undefined || changes.org_id !== undefined) await repo.replaceCollaborators(trx, id, collaboratorIds);
  });
  return getSession(storage, user, id);
}

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
    const model = modelFromRow(row, []);
    if (patternOf(model) === null) throw validationFailed([{ path: '/scope', message: 'the session is not recurring; use scope=series' }]);
    const exceptions = (await repo.exceptionsOf(trx, [id])).get(id);
    const date = occurrenceFor(row, model, exceptions, query.date);
    if (scope === 'occurrence') {
      await repo.addException(trx, id, date);
      return;
    }
    const previous = previousOccurrenceBefore(patternOf(model, exceptions) as NonNullable<ReturnType<typeof patternOf>>, date);
    if (previous === null) await repo.deleteSession(trx, id);
    else await repo.updateSession(trx, id, { recurring_ends: previous, updated_at: new Date().toISOString() });
  });
}

export async function listOccurrences(storage: Storage, user: AuthenticatedUser, id: number, from: string, to: string) {
  checkRange(from, to, '/to');
  const row = await loadVisible(storage, user, id);
  const exceptions = (await repo.exceptionsOf(storage.db, [id])).get(id);
  const model = modelFromRow(row, []);
  const pattern = patternOf(model, exceptions);
  const dates = pattern === null ? (compareDates(from, row.schedule) <= 0 && compareDates(row.schedule, to) <= 0 ? [row.schedule] : []) : occurrencesBetween(pattern, from, to);
  return { data: dates.map((date) => ({ occurrence_date: date, ...occurrenceInstants(date, row.time_minutes, row.duration, row.timezone) })) };
}

type ParticipationAction = 'join' | 'leave' | 'complete';

export async function participate(storage: Storage, user: AuthenticatedUser, id: number, action: ParticipationAction, date?: string) {
  const now = new Date().toISOString();
  return storage.transaction(async (trx) => {
    const row = await repo.findVisibleSession(trx, user, id);
    if (row === undefined) throw notFound('session');
    const model = modelFromRow(row, (await repo.collaboratorHandles(trx, [id])).get(id) ?? []);
    const exceptions = (await repo.exceptionsOf(trx, [id])).get(id);
    const occurrenceDate = occurrenceFor(row, model, exceptions, date);
    const isHost = row.created_by === user.id;
    const existing = await repo.participationOf(trx, id, occurrenceDate, user.id);
    const occurrenceCompleted =
      occurrenceDate === '' ? row.status === 'completed' : (await repo.hostCompletions(trx, [id])).has(repo.occurrenceKey(id, occurrenceDate));
    switch (action) {
      case 'join':
        if (occurrenceCompleted && existing === undefined && !isHost) throw conflict('The session is completed; it can no longer be joined.');
        if (!isHost) await repo.join(trx, id, occurrenceDate, user.id, now);
        break;
      case 'leave':
        if (isHost) throw conflict('The host cannot leave; delete the session instead.');
        if (existing?.completed_at != null) throw conflict('You completed this session; completion cannot be undone.');
        await repo.leave(trx, id, occurrenceDate, user.id);
        break;
      case 'complete':
        if (!isHost && existing === undefined) throw conflict('Join the session before completing it.');
        await repo.complete(trx, id, occurrenceDate, user.id, now);
        if (isHost && occurrenceDate === '' && row.status !== 'completed') {
          await repo.updateSession(trx, id, { status: 'completed', updated_at: now });
        }
        break;
      default: {
        const unreachable: never = action;
        throw new Error(`unknown action ${String(unreachable)}`);
      }
    }
    const fresh = await repo.findVisibleSession(trx, user, id);
    if (fresh === undefined) throw notFound('session');
    const participation = await participationFor(trx, fresh, model, user, occurrenceDate);
    const completedNow =
      occurrenceDate === '' ? fresh.status === 'completed' : (await repo.hostCompletions(trx, [id])).has(repo.occurrenceKey(id, occurrenceDate));
    return {
      data: {
        session_id: id,
        occurrence_date: occurrenceDate === '' ? null : occurrenceDate,
        participation,
        status: completedNow ? ('completed' as const) : (fresh.status as Status),
      },
    };
  });
}
