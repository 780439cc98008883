import type { AuthenticatedUser } from '../auth/auth.caller.js';
import { canSee } from './sessions.visibility.js';
import type { SessionsContext } from './sessions.context.js';
import { type ItemKey, loadItems, renderItems } from './sessions.read-model.js';
import { occurrenceKey } from './sessions.participants-repository.js';
import type { PageKey } from './sessions.repository.js';
import type { Session } from './sessions.schema.js';

/*
 * What the change feed and the event stream read of sessions: the records GET
 * /sessions/{id} answers, for many ids at once, through the one read model.
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
