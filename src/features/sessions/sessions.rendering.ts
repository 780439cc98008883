import fastJsonStringify from 'fast-json-stringify';
import type { TSchema } from 'typebox';
import type { Phase, Status } from '../../domain/vocabulary.js';
import { parseJson } from '../../storage/columns.js';
import type { SessionRow } from '../../storage/tables.js';
import { formatTime12h } from '../recurrence/recurrence.time.js';
import { type Participation, type Session, SessionSchema } from './sessions.schema.js';

/** What a record shows besides its session row. */
export interface RecordExtras {
  collaborators: string[];
  participantsCount: number;
  /** Where the item is in time now (computed at render: it is not stored). */
  phase: Phase;
  /** A dated item: the occurrence it shows, with that occurrence's status. */
  occurrence?: { date: string; starts_at: string; ends_at: string; status: Status };
  /** Leave the EXDATE lines out of rrule (an occurrence in a listing). */
  ruleOnly?: boolean;
  participation?: Participation;
  /** The rrule derived for a series stored before rrule was kept (series.rruleOf). */
  rrule?: string | null | undefined;
}

type RecordRow = SessionRow & { creator_handle: string };

/** The fields an item decides (its occurrence, count, clock and reader); every other field of a record is its row's. */
type ItemFields = Pick<Session, 'status' | 'phase' | 'starts_at' | 'ends_at' | 'rrule' | 'participants_count' | 'occurrence_date' | 'participation'>;
const ITEM_KEYS: ReadonlySet<string> = new Set<keyof ItemFields>(['status', 'phase', 'starts_at', 'ends_at', 'rrule', 'participants_count', 'occurrence_date', 'participation']);

/**
 * A series' rrule without its EXDATE lines: what an item of a dated listing carries, so
 * that a page of occurrences does not repeat the removed-occurrence list on every item.
 */
function ruleOnly(rrule: string): string {
  const cut = rrule.indexOf('\nEXDATE');
  return cut === -1 ? rrule : rrule.slice(0, cut);
}

function itemFields(row: RecordRow, x: RecordExtras): ItemFields {
  const rrule = row.rrule ?? x.rrule ?? null;
  return {
    status: x.occurrence?.status ?? row.status,
    phase: x.phase,
    starts_at: x.occurrence?.starts_at ?? row.starts_at,
    ends_at: x.occurrence?.ends_at ?? row.ends_at,
    rrule: rrule === null ? null : x.ruleOnly === true ? ruleOnly(rrule) : rrule,
    participants_count: x.participantsCount,
    ...(x.occurrence === undefined ? {} : { occurrence_date: x.occurrence.date }),
    ...(x.participation === undefined ? {} : { participation: x.participation }),
  };
}

/**
 * The one place a session row becomes its API record. Copied field by field from the row:
 * building the object through intermediate spreads sent every record down a slow V8 path
 * (docs/performance.md).
 */
export function toSession(row: RecordRow, x: RecordExtras): Session {
  const item = itemFields(row, x);
  return {
    id: row.id,
    org_id: row.org_id,
    name: row.name,
    type: row.type,
    duration: row.duration,
    schedule: row.schedule,
    time: formatTime12h(row.time_minutes),
    timezone: row.timezone,
    is_public: row.is_public === 1,
    collaborator: x.collaborators,
    status: item.status,
    website_blocker_enabled: row.website_blocker_enabled === 1,
    website_blocker: row.website_blocker === null ? null : parseJson(row.website_blocker),
    snooze_enabled: row.snooze_enabled === 1,
    snooze_apps: parseJson(row.snooze_apps),
    is_recurring: row.is_recurring,
    recurring_start: row.recurring_start,
    recurring_ends: row.recurring_ends,
    occurrence: row.occurrence,
    recurring_days: parseJson(row.recurring_days),
    recurring_month_option: row.recurring_month_option,
    recurring_month_week_pos: row.recurring_month_week_pos,
    recurring_month_week_day: row.recurring_month_week_day,
    fallback_option: row.fallback_option,
    reminders: row.reminders === null ? null : parseJson(row.reminders),
    created_by: row.creator_handle,
    created_at: row.created_at,
    updated_at: row.updated_at,
    starts_at: item.starts_at,
    ends_at: item.ends_at,
    rrule: item.rrule,
    participants_count: item.participants_count,
    phase: item.phase,
    ...(item.occurrence_date === undefined ? {} : { occurrence_date: item.occurrence_date }),
    ...(row.split_from === null ? {} : { split_from: row.split_from }),
    ...(item.participation === undefined ? {} : { participation: item.participation }),
  };
}

/**
 * The Session schema's properties in order, cut into runs of row fields and item fields, each
 * with a serializer compiled from its part of the schema: the runs' texts joined by commas are
 * what the schema's own serializer writes for the whole record.
 */
const RUNS = (() => {
  const properties = SessionSchema.properties as Record<string, TSchema>;
  const required = new Set<string>(SessionSchema.required as string[]);
  const runs: { ofItem: boolean; keys: string[] }[] = [];
  for (const key of Object.keys(properties)) {
    const ofItem = ITEM_KEYS.has(key);
    const last = runs.at(-1);
    if (last?.ofItem === ofItem) last.keys.push(key);
    else runs.push({ ofItem, keys: [key] });
  }
  return runs.map(({ ofItem, keys }) => {
    const part = { type: 'object', properties: Object.fromEntries(keys.map((k) => [k, properties[k] as TSchema])), required: keys.filter((k) => required.has(k)) };
    const serialize = fastJsonStringify(part as object) as (data: unknown) => string;
    // Without its braces: "" when the run has no field to write (an optional one absent).
    return { ofItem, write: (data: unknown) => serialize(data).slice(1, -1) };
  });
})();

const ROW_RUNS = RUNS.filter((r) => !r.ofItem);

/** The texts of a row's runs, by row object: a kept row is shared and never changed (sessions.repository.ts). */
const rowRuns = new WeakMap<RecordRow, string[]>();

/**
 * toSession's record as JSON text, as the route's serializer would write it. The row's fields
 * are serialized once per row object and kept, so that a page of rows read before is assembled
 * rather than rebuilt; `x.collaborators` must be the row's own (collaboratorsOf), as a listing's are.
 */
export function recordText(row: RecordRow, x: RecordExtras): string {
  let kept = rowRuns.get(row);
  if (kept === undefined) {
    const whole = toSession(row, x);
    kept = ROW_RUNS.map((r) => r.write(whole));
    rowRuns.set(row, kept);
  }
  const item = itemFields(row, x);
  let text = '';
  let k = 0;
  for (const run of RUNS) {
    const piece = run.ofItem ? run.write(item) : (kept[k++] as string);
    if (piece !== '') text = text === '' ? piece : `${text},${piece}`;
  }
  return `{${text}}`;
}
