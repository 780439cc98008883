import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { notFound } from '../../toolkit/errors.js';
import type { SessionsContext } from './sessions.context.js';
import { checkRange } from './sessions.listing.js';
import { daysIn, occurrenceOf, occurrenceView, phaseAt } from './sessions.occurrences.js';
import { NO_OVERRIDES, dayOf } from './sessions.overrides.js';
import { occurrenceKey, parseOccurrenceKey } from './sessions.participants-repository.js';

/**
 * The occurrences of a session that take place in [from, to] (a one-off session: its own
 * day, if inside), by start: an edited one at its override's instants and on the day it
 * was moved to, with its original occurrence_date.
 */
export async function listOccurrences(ctx: SessionsContext, user: AuthenticatedUser, id: number, from: string, to: string) {
  checkRange(from, to, '/to');
  const { db } = ctx.storage;
  const row = await ctx.sessions.findVisible(db, { user, id });
  if (row === undefined) throw notFound('session');
  const recurring = row.is_recurring === 1;
  const [exceptions, overrides] = recurring ? await Promise.all([ctx.sessions.exceptionsOf(db, [id]).then((e) => e.get(id)), ctx.overrides.of(db, [id])]) : [undefined, NO_OVERRIDES];
  const dates = new Set(daysIn(row, exceptions, from, to));
  // Occurrences an override moved into the range from a day outside it.
  for (const [key, fields] of overrides) {
    const { date } = parseOccurrenceKey(key);
    if (fields.schedule !== undefined && occurrenceOf(row, exceptions, date) === date) dates.add(date);
  }
  const now = new Date();
  const data = [...dates].flatMap((date) => {
    const fields = overrides.get(occurrenceKey(id, date));
    const day = dayOf(date, fields);
    if (day < from || day > to) return [];
    const { starts_at, ends_at } = occurrenceView(row, date, fields);
    return [{ occurrence_date: date, starts_at, ends_at, phase: phaseAt({ starts_at, ends_at }, now) }];
  });
  return { data: data.sort((a, b) => (a.starts_at < b.starts_at ? -1 : a.starts_at > b.starts_at ? 1 : a.occurrence_date < b.occurrence_date ? -1 : 1)) };
}
