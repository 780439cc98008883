import type { AuthenticatedUser } from '../auth/auth.caller.js';
import type { SessionsContext } from './sessions.context.js';
import { type ItemKey, loadItems, renderItems } from './sessions.read-model.js';
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
