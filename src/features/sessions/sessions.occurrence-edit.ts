import type { Db } from '../../storage/database.js';
import type { SessionRow } from '../../storage/tables.js';
import { type FieldError, conflict, validationFailed } from '../../toolkit/errors.js';
import { isFlagged } from '../../toolkit/validation.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { isOccurrence, previousOccurrenceBefore } from '../recurrence/recurrence.engine.js';
import { logSessionChange } from './sessions.changes.js';
import type { SessionsContext } from './sessions.context.js';
import { reindexSession } from './sessions.indexer.js';
import { type SessionModel, columnsOf, modelFromRow, patternOf, writableFields } from './sessions.model.js';
import { ONE_OFF, occurrenceRows, resolveOccurrence, seriesPattern } from './sessions.occurrences.js';
import { MAX_OVERRIDES, OCCURRENCE_FIELDS, type OverrideFields, dayOf, movesDay, overrideColumns } from './sessions.overrides.js';
import { occurrenceView } from './sessions.occurrences.js';
import { occurrenceKey } from './sessions.participants-repository.js';
import { type ListedRow, collaboratorsOf } from './sessions.repository.js';
import { checkSessionRules } from './sessions.rules.js';
import type { UpdateSessionBody } from './sessions.schema.js';

/*
 * Editing one occurrence of a series, and "this and following" (contract section 10). Both
 * run in the transaction of sessions.service.ts' update, on the row it locked for its creator.
 */

const ONE_DAY = new Set<string>(OCCURRENCE_FIELDS);

/** The same fields with the same values, whatever their order. */
const sameFields = (a: OverrideFields | undefined, b: OverrideFields) => {
  const sorted = (f: OverrideFields | undefined) => JSON.stringify(Object.entries(f ?? {}).sort(([x], [y]) => (x < y ? -1 : 1)));
  return sorted(a) === sorted(b);
};

/**
 * Stores the body as the override of the occurrence on `date` (merged into one it already
 * has). 404 when that day is not an occurrence; 422 for a field one occurrence cannot set.
 * Sending what the override already holds changes nothing. `exceptions`: the series'
 * removed days, read by the caller in this transaction.
 */
export async function editOccurrence(
  ctx: SessionsContext,
  trx: Db,
  user: AuthenticatedUser,
  { row, exceptions }: { row: SessionRow; exceptions: ReadonlySet<string> | undefined },
  date: string,
  body: UpdateSessionBody,
  schemaErrors: readonly FieldError[],
): Promise<void> {
  resolveOccurrence(row, exceptions, date);
  const changes = writableFields(body, (field) => isFlagged(schemaErrors, field));
  const errors = [...schemaErrors];
  for (const field of Object.keys(changes)) {
    if (!ONE_DAY.has(field)) errors.push({ path: `/${field}`, message: 'cannot differ for one occurrence: edit the series, or use scope=following' });
  }
  if (errors.length === 0 && Object.keys(changes).length === 0) throw validationFailed([{ path: '/', message: 'send at least one writable field' }]);
  const allowed: Partial<SessionModel> = Object.fromEntries(Object.entries(changes).filter(([field]) => ONE_DAY.has(field)));
  await checkSessionRules(ctx, trx, user, allowed, errors);
  const overrides = await ctx.overrides.of(trx, [row.id]);
  const before = overrides.get(occurrenceKey(row.id, date));
  if (before === undefined && overrides.size >= MAX_OVERRIDES) {
    throw conflict(`A series keeps at most ${MAX_OVERRIDES} edited occurrences; edit the series (or scope=following) instead.`);
  }
  const fields = { ...before, ...overrideColumns(allowed) };
  if (sameFields(before, fields)) return;
  const now = new Date().toISOString();
  await logSessionChange(ctx, trx, { action: 'updated', user, now, before: row, occurrenceDate: date });
  await ctx.overrides.put(trx, { sessionId: row.id, date, fields, now });
  // The series' version moves with it: its ETag, and the calendar feed that carries the exception.
  await ctx.sessions.update(trx, row.id, { updated_at: now });
  await placeInIndex(ctx, trx, row, date, fields, exceptions);
}

/**
 * The index row of an edited occurrence: moved in place inside the indexed span; outside it,
 * held only while the override moves the day (what reads by day need; the rest is expanded).
 */
async function placeInIndex(ctx: SessionsContext, trx: Db, row: SessionRow, date: string, fields: OverrideFields, exceptions: ReadonlySet<string> | undefined) {
  const view = occurrenceView(row, date, fields);
  const inSpan = row.indexed_through !== null && date <= row.indexed_through && (row.indexed_from === null || date >= row.indexed_from);
  if (inSpan || row.indexed_through === null) {
    await ctx.index.move(trx, { sessionId: row.id, date, values: { starts_at: view.starts_at, ends_at: view.ends_at, day: dayOf(date, fields) } });
    return;
  }
  await ctx.index.remove(trx, { sessionId: row.id, date });
  if (!movesDay(date, fields)) return;
  const completed = await ctx.participants.hostCompletions(trx, { sessionIds: [row.id], from: date, to: date });
  const hostCompleted = new Set(completed.has(occurrenceKey(row.id, date)) ? [date] : []);
  const rows = occurrenceRows(row, exceptions, hostCompleted, date, date, new Map([[occurrenceKey(row.id, date), fields]]));
  await ctx.index.write(trx, { replace: [], rows, through: new Map() });
}

/**
 * Ends a series on `last` (its last occurrence before a cut), logged as its update, with the
 * removed days it keeps; the caller moves or drops what follows and reindexes. Shared by
 * "this and following" edits and deletes.
 */
export async function endSeries(ctx: SessionsContext, trx: Db, q: { user: AuthenticatedUser; row: SessionRow; last: string; removed: ReadonlySet<string>; now: string }): Promise<void> {
  const { starts_at, ends_at, rrule } = columnsOf({ ...modelFromRow(q.row, []), recurring_ends: q.last }, q.now, q.removed);
  await logSessionChange(ctx, trx, { action: 'updated', user: q.user, now: q.now, before: q.row });
  await ctx.sessions.update(trx, q.row.id, { recurring_ends: q.last, starts_at, ends_at, rrule, updated_at: q.now });
}

/**
 * "This and following" from `date`: the series ends the day before, and a new one (the
 * body applied to the old one's fields, its collaborators kept, `split_from` the old id)
 * takes the occurrences from `date` on, with their participation, overrides and removed
 * days. Answers the new series' id, or undefined when `date` is the first occurrence (the
 * caller then edits the series as a whole).
 */
export async function splitSeries(ctx: SessionsContext, trx: Db, user: AuthenticatedUser, row: ListedRow, date: string, body: UpdateSessionBody, schemaErrors: readonly FieldError[]): Promise<number | undefined> {
  const exceptions = (await ctx.sessions.exceptionsOf(trx, [row.id])).get(row.id) ?? new Set<string>();
  if (seriesPattern(row) === null) throw validationFailed([{ path: '/scope', message: 'the session is not recurring; leave out scope' }]);
  resolveOccurrence(row, exceptions, date);
  const previous = previousOccurrenceBefore({ ...(seriesPattern(row) as NonNullable<ReturnType<typeof seriesPattern>>), exceptions }, date);
  if (previous === null) return undefined;
  const changes = writableFields(body, (field) => isFlagged(schemaErrors, field));
  const current = modelFromRow(row, collaboratorsOf(row));
  // The new series starts on `date` unless the body says where.
  const start = changes.recurring_start ?? changes.schedule ?? date;
  const model: SessionModel = { ...current, ...changes, schedule: changes.schedule ?? start, recurring_start: changes.recurring_start ?? null };
  const moved = new Set([...exceptions].filter((d) => d >= date));
  const collaboratorIds = await checkSessionRules(ctx, trx, user, model, schemaErrors, moved);
  const now = new Date().toISOString();
  const newId = await ctx.sessions.insert(trx, { ...columnsOf(model, now, moved), created_by: row.created_by, created_at: now, split_from: row.id });
  await ctx.sessions.replaceCollaborators(trx, { sessionId: newId, userIds: collaboratorIds });
  await ctx.sessions.moveOccurrences(trx, { from: row.id, to: newId, date });
  // Days the new pattern does not have keep neither participation nor an override.
  const pattern = patternOf(model, moved);
  const exists = (d: string) => d !== ONE_OFF && pattern !== null && isOccurrence(pattern, d);
  await ctx.participants.keepOnly(trx, { sessionId: newId, exists });
  await ctx.overrides.keepOnly(trx, { sessionId: newId, exists });
  await endSeries(ctx, trx, { user, row, last: previous, removed: new Set([...exceptions].filter((d) => d < date)), now });
  await reindexSession(ctx, trx, row.id);
  await reindexSession(ctx, trx, newId);
  await logSessionChange(ctx, trx, { action: 'created', user, now, after: { id: newId, org_id: model.org_id, created_by: row.created_by } });
  return newId;
}
