import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { canSee } from './sessions.visibility.js';
import type { SessionsContext } from './sessions.context.js';
import type { DatedKey } from './sessions.occurrence-index.js';
import { occurrencesAt } from './sessions.occurrence-source.js';
import { ONE_OFF, occurrenceOf } from './sessions.occurrences.js';
import { type ItemKey, loadItems, occurrenceItems, renderItems } from './sessions.read-model.js';
import { occurrenceKey } from './sessions.participants-repository.js';
import type { PageKey } from './sessions.repository.js';
import type { Session } from './sessions.schema.js';
import { loadSeries } from './sessions.series.js';

/*
 * What the change feed, the event stream and webhooks read of sessions: the records GET
 * /sessions/{id} answers, for many ids (and readers) at once, through the one read model.
 */

/**
 * The current records of those of `ids` the user can see, with the user's participation,
 * by id: a fixed number of queries whatever the number (visibility is checked on the rows
 * read). An id missing from the answer is deleted or not visible to the user.
 */
export async function visibleRecords(ctx: SessionsContext, user: AuthenticatedUser, ids: readonly number[]): Promise<Map<number, Session>> {
  if (ids.length === 0 || user.orgIds.length === 0) return new Map();
  const items: ItemKey[] = [...new Set(ids)].map((id) => ({ id }));
  const set = await loadItems(ctx, ctx.storage.db, { user, items, listing: { filters: { orgIds: user.orgIds } }, participation: true });
  return new Map(renderItems(set, items, user).map((s) => [s.id, s]));
}

/**
 * visibleRecords for many readers at once (the event streams of one instance): the read
 * model is loaded once, with every reader's participation in one more query, and each
 * reader's records are then told apart in memory by the visibility rule (canSee); a record
 * is rendered once per distinct view of it, the same object for readers who see the same
 * (do not mutate). The answer is by reader, in the order given.
 */
export async function visibleRecordsForReaders(ctx: SessionsContext, readers: readonly AuthenticatedUser[], ids: readonly number[]): Promise<Map<number, Session>[]> {
  const members = readers.filter((r) => r.orgIds.length > 0);
  if (ids.length === 0 || members.length === 0) return readers.map(() => new Map());
  const db = ctx.storage.db;
  const items: ItemKey[] = [...new Set(ids)].map((id) => ({ id }));
  const [set, joined] = await Promise.all([
    loadItems(ctx, db, { user: members[0] as AuthenticatedUser, items }),
    ctx.participants.ofUsers(db, { userIds: members.map((r) => r.id), sessionIds: items.map((i) => i.id) }),
  ]);
  // Per user: the participation rows by occurrence, and the sessions joined (any occurrence).
  const participation = new Map<number, Map<string, { joined_at: string; completed_at: string | null }>>();
  const joinedSessions = new Map<number, Set<number>>();
  for (const p of joined) {
    const mine = participation.get(p.user_id) ?? new Map<string, { joined_at: string; completed_at: string | null }>();
    participation.set(p.user_id, mine.set(occurrenceKey(p.session_id, p.occurrence_date), { joined_at: p.joined_at, completed_at: p.completed_at }));
    joinedSessions.set(p.user_id, (joinedSessions.get(p.user_id) ?? new Set<number>()).add(p.session_id));
  }
  // Readers differ only in their participation: a record is rendered once per distinct view and shared (read-only).
  const rendered = new Map<string, Session>();
  return readers.map((reader) => {
    const mine = participation.get(reader.id) ?? new Map<string, { joined_at: string; completed_at: string | null }>();
    const records = new Map<number, Session>();
    items.forEach((item, i) => {
      const row = set.rows.get(item.id);
      if (row === undefined) return;
      const collaborators = set.collaborators.get(item.id) ?? [];
      const seen = canSee(reader, {
        org_id: row.org_id,
        is_public: row.is_public,
        created_by: row.created_by,
        collaboratorHandles: collaborators,
        joined: joinedSessions.get(reader.id)?.has(item.id) === true,
      });
      if (!seen) return;
      const counted = set.counted[i] ?? null;
      const p = counted === null ? undefined : mine.get(occurrenceKey(item.id, counted));
      // Everything of the reader that the record shows (renderItems' participation).
      const view = [i, row.created_by === reader.id, collaborators.includes(reader.handle), p?.joined_at ?? '', p?.completed_at ?? ''].join('\u0000');
      let record = rendered.get(view);
      if (record === undefined) {
        record = renderItems({ ...set, counted: [counted], participation: mine }, [item], reader)[0];
        if (record === undefined) return;
        rendered.set(view, record);
      }
      records.set(record.id, record);
    });
    return records;
  });
}

/**
 * One page of every session visible to the user (a full sync), in listing order after
 * `after`: each key with its record (none when it turned invisible between the two reads;
 * its change comes later in the feed), and whether more follow.
 */
export async function visiblePage(
  ctx: SessionsContext,
  user: AuthenticatedUser,
  q: { after: PageKey | undefined; limit: number },
): Promise<{ items: { key: PageKey; record: Session | undefined }[]; more: boolean }> {
  if (user.orgIds.length === 0) return { items: [], more: false };
  const keys = await ctx.sessions.keys({ user, filters: { orgIds: user.orgIds }, after: q.after, limit: q.limit + 1 });
  const page = keys.slice(0, q.limit);
  const records = await visibleRecords(ctx, user, page.map((k) => k.id));
  return { items: page.map((key) => ({ key, record: records.get(key.id) })), more: keys.length > q.limit };
}

/** A record asked for as one reader sees it: the session, or with `date` that occurrence of it. */
export interface RecordRequest {
  reader: AuthenticatedUser;
  id: number;
  date?: string | undefined;
}

/**
 * The records of `requests`, in order, each what GET /sessions/{id}?date= answers its reader
 * (with participation); undefined where that is 404: the session or occurrence is gone from
 * the reader's sight. A fixed number of queries per distinct reader.
 */
export async function recordsAsSeen(ctx: SessionsContext, requests: readonly RecordRequest[]): Promise<(Session | undefined)[]> {
  const out = new Map<string, Session | undefined>();
  const key = (r: Pick<RecordRequest, 'id' | 'date'> & { readerId: number }) => `${r.readerId}|${r.id}|${r.date ?? ''}`;
  const byReader = new Map<number, { reader: AuthenticatedUser; asked: RecordRequest[] }>();
  for (const r of requests) {
    const group = byReader.get(r.reader.id) ?? { reader: r.reader, asked: [] };
    byReader.set(r.reader.id, group);
    group.asked.push(r);
  }
  for (const { reader, asked } of byReader.values()) {
    for (const [k, record] of await recordsOfReader(ctx, reader, asked)) out.set(k, record);
  }
  return requests.map((r) => out.get(key({ readerId: r.reader.id, id: r.id, date: r.date })));
}

async function recordsOfReader(ctx: SessionsContext, reader: AuthenticatedUser, asked: readonly RecordRequest[]): Promise<Map<string, Session>> {
  const db = ctx.storage.db;
  const rows = await ctx.sessions.byIds(db, { ids: asked.map((r) => r.id), listing: { user: reader, filters: { orgIds: reader.orgIds } } });
  const series = await loadSeries(ctx.sessions, db, [...rows.values()]);
  const wanted = asked.flatMap((r) => {
    const row = rows.get(r.id);
    if (row === undefined) return [];
    if (r.date === undefined) return [{ asked: r, row, date: ONE_OFF }];
    const resolved = occurrenceOf(row, series.get(r.id)?.exceptions, r.date);
    // A one-off session asked for on its day reads as a dated listing shows it: with its occurrence_date.
    return resolved === undefined ? [] : [{ asked: r, row, date: resolved === ONE_OFF ? row.schedule : resolved }];
  });
  const items = await occurrenceItems(ctx, db, wanted);
  const set = await loadItems(ctx, db, { user: reader, items, participation: true });
  const out = new Map<string, Session>();
  items.forEach((item, i) => {
    const [record] = renderItems({ ...set, counted: [set.counted[i] ?? null] }, [item], reader);
    const r = wanted[i]?.asked;
    if (record !== undefined && r !== undefined) out.set(`${reader.id}|${r.id}|${r.date ?? ''}`, record);
  });
  return out;
}

/**
 * The user's occurrences running at `clock` (at most `limit`) and the first that starts
 * after it (null: none), each as a dated listing shows it: what /me/now answers.
 */
export async function recordsAt(ctx: SessionsContext, user: AuthenticatedUser, clock: Date, limit: number): Promise<{ active: Session[]; next: Session | null }> {
  const around = await occurrencesAt(ctx, user, clock, limit);
  const asItem = (k: DatedKey): ItemKey => ({ id: k.id, occurrence: { date: k.date, starts_at: k.startsAt, ends_at: k.endsAt, completed: k.completed } });
  const items = [...around.running, ...(around.next === undefined ? [] : [around.next])].map(asItem);
  const records = renderItems(await loadItems(ctx, ctx.storage.db, { user, items, now: clock }), items, user, { listing: true });
  const next = around.next === undefined ? null : (records.find((r) => r.id === around.next?.id && r.occurrence_date === around.next.date) ?? null);
  return { active: records.filter((r) => r !== next), next };
}
