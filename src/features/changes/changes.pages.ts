import { PAGE_BYTE_BUDGET, jsonBytes } from '../../toolkit/api.js';
import { type ChangesRepository, type PositionedChange, concerns, sawBefore } from '../../changelog/changelog.repository.js';
import type { AuthenticatedUser } from '../auth/auth.caller.js';
import type { Session, SessionsService } from '../sessions/sessions.api.js';
import type { TasksService } from '../tasks/tasks.service.js';
import type { Task } from '../tasks/tasks.schema.js';
import type { FeedPage, FeedPosition, PositionedEntry } from './changes.cursor.js';
import type { ChangeEntry } from './changes.schema.js';

/**
 * Change rows one read looks at, at most: most may be other members' private sessions,
 * invisible to the reader; then the cursor moves past them and the next read goes on.
 */
export const SCAN_LIMIT = 1_000;
/** Reads of SCAN_LIMIT rows one request makes at most while it finds nothing for the reader. */
const MAX_SCANS = 10;

/** What the feed's pages are read from: the log, and the sessions' and tasks' own read models. */
export interface FeedSources {
  sessions: SessionsService;
  tasks: TasksService;
  changes: ChangesRepository;
}

/** The occurrence a log row edited (PUT ?date=), told as its own entry; undefined for any other change. */
const editedOccurrence = (row: PositionedChange) => (row.kind === 'session' && row.action === 'updated' && row.occurrence_date !== null ? row.occurrence_date : undefined);

/** Each reader's edited occurrences among `rows`, as each sees them (GET /sessions/{id}?date=), by `${reader}|${id}|${date}`: one batched read. */
async function occurrencesSeen(src: FeedSources, readers: readonly AuthenticatedUser[], rows: readonly (readonly PositionedChange[])[]): Promise<Map<string, Session>> {
  const asked = new Map<string, { reader: AuthenticatedUser; id: number; date: string }>();
  readers.forEach((reader, i) => {
    for (const r of rows[i] ?? []) {
      const date = editedOccurrence(r);
      if (date !== undefined) asked.set(`${reader.id}|${r.record_id}|${date}`, { reader, id: r.record_id, date });
    }
  });
  if (asked.size === 0) return new Map();
  const seen = await src.sessions.recordsAsSeen([...asked.values()]);
  const out = new Map<string, Session>();
  [...asked.keys()].forEach((key, i) => {
    const record = seen[i];
    if (record !== undefined) out.set(key, record);
  });
  return out;
}

/**
 * What a reader is told of log rows that concern it (ChangesRepository.after), given the
 * records visible to it now: each record once, in its current state, at the position of its
 * first change (commit order); a deletion, or a session it lost sight of, only if it saw the
 * record before. An edited occurrence is an entry of its own, with `occurrence_date` and the
 * occurrence as the reader sees it (`occurrences`, from occurrencesSeen). Pure.
 */
function feedEntries(user: AuthenticatedUser, rows: readonly PositionedChange[], sessions: ReadonlyMap<number, Session>, tasks: ReadonlyMap<number, Task>, occurrences: ReadonlyMap<string, Session>): PositionedEntry[] {
  const records = new Map<string, { first: PositionedChange; last: PositionedChange; seen: boolean }>();
  for (const row of rows) {
    const date = editedOccurrence(row);
    const key = `${row.kind}:${row.record_id}${date === undefined ? '' : `:${date}`}`;
    const seen = row.kind === 'task' || sawBefore(user, row);
    const known = records.get(key);
    if (known === undefined) records.set(key, { first: row, last: row, seen });
    else records.set(key, { first: known.first, last: row, seen: known.seen || seen });
  }
  const entries: PositionedEntry[] = [];
  // Map order is the order of first changes: commit order.
  for (const { first, last, seen } of records.values()) {
    const date = editedOccurrence(first);
    const occurrence = date === undefined ? undefined : occurrences.get(`${user.id}|${first.record_id}|${date}`);
    const record = occurrence ?? (first.kind === 'session' ? sessions.get(first.record_id) : tasks.get(first.record_id));
    // Never seen and not visible now: nothing to tell this reader.
    if (record === undefined && !seen) continue;
    const id = String(first.record_id);
    const entry: ChangeEntry =
      record === undefined
        ? { type: first.kind, id, deleted: true, record: null, changed_at: last.changed_at }
        : { type: first.kind, id, deleted: false, record, changed_at: last.changed_at, ...(occurrence === undefined ? {} : { occurrence_date: date }) };
    entries.push({ entry, position: first.position, changedAt: first.changed_at });
  }
  return entries;
}

/** A page of a full sync from `at`; once it has listed everything, the log from the head it began at. */
export async function fullSync(src: FeedSources, user: AuthenticatedUser, at: Extract<FeedPosition, { phase: 'sessions' | 'tasks' }>, limit: number): Promise<FeedPage> {
  const entries: PositionedEntry[] = [];
  let bytes = 0;
  let place: FeedPosition = at;
  const add = (entry: ChangeEntry) => {
    const size = jsonBytes(entry);
    if (entries.length >= limit || (bytes + size > PAGE_BYTE_BUDGET && entries.length > 0)) return false;
    bytes += size;
    entries.push({ entry, position: at.head, changedAt: new Date(at.issuedAt).toISOString() });
    return true;
  };
  if (place.phase === 'sessions') {
    const page = await src.sessions.visiblePage(user, { after: place.id === 0 ? undefined : { startsAt: place.startsAt, id: place.id }, limit });
    for (const { key, record } of page.items) {
      if (record !== undefined && !add({ type: 'session', id: String(record.id), deleted: false, record, changed_at: record.updated_at })) {
        return { entries, next: place };
      }
      place = { ...place, startsAt: key.startsAt, id: key.id };
    }
    if (page.more) return { entries, next: place };
    place = { phase: 'tasks', head: at.head, startsAt: '', id: 0, issuedAt: at.issuedAt };
  }
  if (entries.length < limit) {
    const page = await src.tasks.page(user, { afterId: place.id, limit: limit - entries.length });
    for (const record of page.records) {
      if (!add({ type: 'task', id: record.id, deleted: false, record, changed_at: record.updated_at })) return { entries, next: place };
      place = { ...place, id: Number(record.id) };
    }
    if (page.more) return { entries, next: place };
    return { entries, next: { phase: 'log', head: at.head, issuedAt: at.issuedAt } };
  }
  return { entries, next: place };
}

/**
 * What changed after `after`, up to `upTo` (a head read before: see
 * ChangesRepository.after): each record once, in its current state, at the position of
 * its first change in the read; one read of the log, then one of each kind's records.
 * At its first change, not its last: a page cut after it then has told the reader about
 * every row up to the cut (a later row of the same record comes again on the next page).
 */
export async function since(src: FeedSources, user: AuthenticatedUser, q: { after: number; upTo: number; limit: number; readAt: number }): Promise<FeedPage> {
  let page: FeedPage = { entries: [], next: { phase: 'log', head: q.after, issuedAt: q.readAt } };
  // An empty page means up to date: while a read finds only changes this reader may not
  // see, read on, up to a bound; past it an empty page is answered anyway (the next poll goes on).
  for (let scans = 0; scans < MAX_SCANS && page.entries.length === 0 && page.next.head < q.upTo; scans++) {
    page = await scan(src, user, { ...q, after: page.next.head });
  }
  return page;
}

async function scan(src: FeedSources, user: AuthenticatedUser, q: { after: number; upTo: number; limit: number; readAt: number }): Promise<FeedPage> {
  const rows = await src.changes.after({ orgIds: user.orgIds, ownerId: user.id, after: q.after, upTo: q.upTo, limit: SCAN_LIMIT });
  const ofKind = (kind: string) => [...new Set(rows.filter((r) => r.kind === kind).map((r) => r.record_id))];
  const [sessions, tasks, occurrences] = await Promise.all([src.sessions.visibleRecords(user, ofKind('session')), src.tasks.records(user, ofKind('task')), occurrencesSeen(src, [user], [rows])]);

  const entries: PositionedEntry[] = [];
  let bytes = 0;
  const end = rows.length < SCAN_LIMIT ? undefined : rows.at(-1);
  let next: FeedPosition = { phase: 'log', head: end?.position ?? q.upTo, issuedAt: Math.min(q.readAt, Date.parse(end?.changed_at ?? '') || q.readAt) };
  for (const positioned of feedEntries(user, rows, sessions, tasks, occurrences)) {
    const size = jsonBytes(positioned.entry);
    if (entries.length >= q.limit || (bytes + size > PAGE_BYTE_BUDGET && entries.length > 0)) {
      // Cut short: the page ends at its last entry, and the rest comes on the next one.
      const stop = entries.at(-1) as PositionedEntry;
      next = { phase: 'log', head: stop.position, issuedAt: Math.min(q.readAt, Date.parse(stop.changedAt) || q.readAt) };
      break;
    }
    bytes += size;
    entries.push(positioned);
  }
  return { entries, next };
}

/**
 * The entries of `rows` (positioned changes every reader has seen up to the one before
 * the first) for each reader, in the order given, from one load of the records for all:
 * what an instance's event streams are sent when the log moves. Unpaged: the caller
 * bounds the rows.
 */
export async function forReaders(src: FeedSources, readers: readonly AuthenticatedUser[], rows: readonly PositionedChange[]): Promise<PositionedEntry[][]> {
  // The hub tests the same rows only to skip the streams nothing concerns; which rows a
  // reader is sent is the feed's rule, applied here so that this is right whatever the
  // caller filtered (at most 500 rows per reader: the hub bounds them).
  const concerned = readers.map((reader) => rows.filter((row) => concerns(reader, row)));
  const ids = (kind: string) => [...new Set(concerned.flat().filter((r) => r.kind === kind).map((r) => r.record_id))];
  const [sessions, tasks, occurrences] = await Promise.all([
    src.sessions.visibleRecordsForReaders(readers, ids('session')),
    src.tasks.recordsOfOwners(readers, ids('task')),
    occurrencesSeen(src, readers, concerned),
  ]);
  return readers.map((reader, i) => feedEntries(reader, concerned[i] ?? [], sessions[i] ?? new Map(), tasks[i] ?? new Map(), occurrences));
}
