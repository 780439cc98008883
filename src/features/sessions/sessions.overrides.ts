import { toJson } from '../../storage/columns.js';
import type { Db } from '../../storage/database.js';
import type { SessionRow } from '../../storage/tables.js';
import type { SessionModel } from './sessions.model.js';
import { occurrenceKey, parseOccurrenceKey } from './sessions.participants-repository.js';

/*
 * Occurrence overrides (contract section 10): one edited day of a series, stored as the
 * session columns that day sets. Everything that shows an occurrence reads it through
 * `overriddenRow` (what the record shows) and occurrenceView's `fields` (its instants).
 */

/** The fields one occurrence may set (the API's names). */
export const OCCURRENCE_FIELDS = ['name', 'time', 'duration', 'schedule', 'website_blocker_enabled', 'website_blocker', 'snooze_enabled', 'snooze_apps'] as const;

/** The session columns an override sets (absent: the series' value). */
export type OverrideFields = Partial<Pick<SessionRow, 'name' | 'time_minutes' | 'duration' | 'schedule' | 'website_blocker_enabled' | 'website_blocker' | 'snooze_enabled' | 'snooze_apps'>>;

/** Overrides by occurrenceKey(session id, original date). */
export type Overrides = ReadonlyMap<string, OverrideFields>;

/** An override's stored `fields` read back. */
export const fieldsOf = (stored: string): OverrideFields => JSON.parse(stored) as OverrideFields;

export const NO_OVERRIDES: Overrides = new Map();

/** Occurrences per read of their overrides: their sessions and dates stay well within both databases' parameter limits. */
const KEYS_PER_READ = 10_000;

/** A series keeps at most this many edited occurrences, so that loading all of a series' overrides stays bounded. */
export const MAX_OVERRIDES = 1000;

/** The columns of the occurrence fields present in a (validated) model part. */
export function overrideColumns(m: Partial<SessionModel>): OverrideFields {
  const out: OverrideFields = {};
  if (m.name !== undefined) out.name = m.name;
  if (m.time !== undefined) out.time_minutes = m.time;
  if (m.duration !== undefined) out.duration = m.duration;
  if (m.schedule !== undefined) out.schedule = m.schedule;
  if (m.website_blocker_enabled !== undefined) out.website_blocker_enabled = m.website_blocker_enabled ? 1 : 0;
  if (m.website_blocker !== undefined) out.website_blocker = m.website_blocker === null ? null : toJson(m.website_blocker);
  if (m.snooze_enabled !== undefined) out.snooze_enabled = m.snooze_enabled ? 1 : 0;
  if (m.snooze_apps !== undefined) out.snooze_apps = toJson(m.snooze_apps);
  return out;
}

/** The row as one occurrence shows it: the series' row with the override's columns (the same object when none). */
export const overriddenRow = <R extends SessionRow>(row: R, fields: OverrideFields | undefined): R => (fields === undefined ? row : { ...row, ...fields });

/** The day an occurrence takes place on: its own, or the one an override moved it to. */
export const dayOf = (date: string, fields: OverrideFields | undefined) => fields?.schedule ?? date;

/** An override that moves its occurrence to another day. */
export const movesDay = (date: string, fields: OverrideFields | undefined) => fields?.schedule !== undefined && fields.schedule !== date;

/** movedDates' grouping, built once per loaded map. */
const movedBySession = new WeakMap<Overrides, Map<number, string[]>>();

/**
 * The original dates of a session's occurrences that an override moved to another day. The
 * occurrence index holds every such occurrence of an indexed series, whatever its span, so
 * that reads by day find it where it takes place (sessions.indexer.ts).
 */
export function movedDates(overrides: Overrides, sessionId: number): readonly string[] {
  let grouped = movedBySession.get(overrides);
  if (grouped === undefined) {
    grouped = new Map();
    for (const [key, fields] of overrides) {
      const { sessionId: id, date } = parseOccurrenceKey(key);
      if (!movesDay(date, fields)) continue;
      const dates = grouped.get(id);
      if (dates === undefined) grouped.set(id, [date]);
      else dates.push(date);
    }
    movedBySession.set(overrides, grouped);
  }
  return grouped.get(sessionId) ?? [];
}

/** The overrides of sessions, and their writes; each runs in the caller's transaction (or on the storage's db). */
export const overrideRows = {
  /** Every override of the given sessions (at most MAX_OVERRIDES each), by occurrenceKey. */
  async of(db: Db, sessionIds: readonly number[]): Promise<Map<string, OverrideFields>> {
    const out = new Map<string, OverrideFields>();
    if (sessionIds.length === 0) return out;
    const rows = await db.selectFrom('session_overrides').select(['session_id', 'occurrence_date', 'fields']).where('session_id', 'in', [...new Set(sessionIds)]).execute();
    for (const r of rows) out.set(occurrenceKey(r.session_id, r.occurrence_date), fieldsOf(r.fields));
    return out;
  },

  /**
   * The overrides of the given occurrences, by occurrenceKey: one statement for a page's,
   * one per KEYS_PER_READ for a history's (their sessions and dates as parameters).
   */
  async at(db: Db, keys: readonly { sessionId: number; date: string }[]): Promise<Map<string, OverrideFields>> {
    const out = new Map<string, OverrideFields>();
    const wanted = new Set(keys.map((k) => occurrenceKey(k.sessionId, k.date)));
    for (let i = 0; i < keys.length; i += KEYS_PER_READ) {
      const part = keys.slice(i, i + KEYS_PER_READ);
      const rows = await db
        .selectFrom('session_overrides')
        .select(['session_id', 'occurrence_date', 'fields'])
        .where('session_id', 'in', [...new Set(part.map((k) => k.sessionId))])
        .where('occurrence_date', 'in', [...new Set(part.map((k) => k.date))])
        .execute();
      for (const r of rows) {
        const key = occurrenceKey(r.session_id, r.occurrence_date);
        if (wanted.has(key)) out.set(key, fieldsOf(r.fields));
      }
    }
    return out;
  },

  async put(db: Db, q: { sessionId: number; date: string; fields: OverrideFields; now: string }): Promise<void> {
    const values = { session_id: q.sessionId, occurrence_date: q.date, fields: JSON.stringify(q.fields), updated_at: q.now };
    await db
      .insertInto('session_overrides')
      .values(values)
      .onConflict((oc) => oc.columns(['session_id', 'occurrence_date']).doUpdateSet({ fields: values.fields, updated_at: q.now }))
      .execute();
  },

  /** Removes one override. */
  async remove(db: Db, q: { sessionId: number; date: string }): Promise<void> {
    await db.deleteFrom('session_overrides').where('session_id', '=', q.sessionId).where('occurrence_date', '=', q.date).execute();
  },

  /** Forgets the overrides of days the series no longer has (its pattern changed). */
  async keepOnly(db: Db, q: { sessionId: number; exists: (date: string) => boolean }): Promise<void> {
    const rows = await db.selectFrom('session_overrides').select('occurrence_date').where('session_id', '=', q.sessionId).execute();
    const gone = rows.map((r) => r.occurrence_date).filter((date) => !q.exists(date));
    if (gone.length > 0) await db.deleteFrom('session_overrides').where('session_id', '=', q.sessionId).where('occurrence_date', 'in', gone).execute();
  },

  /** Forgets the overrides on or after `from` (the series ended before it). */
  async removeFrom(db: Db, q: { sessionId: number; from: string }): Promise<void> {
    await db.deleteFrom('session_overrides').where('session_id', '=', q.sessionId).where('occurrence_date', '>=', q.from).execute();
  },
};
