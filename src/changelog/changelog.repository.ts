import { sql } from 'kysely';
import type { Db, Storage } from '../storage/database.js';
import { parseJson } from '../storage/columns.js';
import type { Audience, ChangeAction } from '../domain/vocabulary.js';
import type { ChangeRow, NewChange } from '../storage/tables.js';

/** Who reads the log: a user and the orgs the user is in (an authenticated caller is one). */
export interface ChangeReader {
  readonly id: number;
  readonly orgIds: readonly number[];
}

/** A change-log row that has its place in commit order. */
export type PositionedChange = ChangeRow & { position: number };

/**
 * Whether `user` could see a changed session before the change, from what its row kept of
 * the audience: the change feed and webhooks tell a deletion or a lost sight only to them.
 * A user no longer in the session's org is told nothing.
 */
export function sawBefore(user: ChangeReader, row: ChangeRow): boolean {
  if (row.audience === null || row.org_id === null || !user.orgIds.includes(row.org_id)) return false;
  const audience: Audience = parseJson(row.audience);
  return audience.public || audience.users.includes(user.id);
}

/** Whether a change is one `after` reads for the user: a session of one of the user's orgs, or one of the user's tasks. */
export const concerns = (user: ChangeReader, row: ChangeRow) =>
  row.kind === 'task' ? row.owner_id === user.id : row.org_id !== null && user.orgIds.includes(row.org_id);

/** The log entry of a change to one task: only its owner reads it; `actorId` made it (the owner, or whoever deleted its session). */
export const taskChange = (q: { id: number; action: ChangeAction; ownerId: number; actorId: number; now: string }): NewChange => ({
  kind: 'task',
  action: q.action,
  record_id: q.id,
  org_id: null,
  owner_id: q.ownerId,
  audience: null,
  actor_id: q.actorId,
  changed_at: q.now,
});

export type ChangesRepository = ReturnType<typeof createChangesRepository>;

/**
 * The change log: written in the transaction of every change to a session or task, read
 * by position (commit order, `sequence`). Built once per storage.
 */
export function createChangesRepository(storage: Storage) {
  const chunk = Math.max(1, Math.floor(storage.maxParameters / 10));

  return {
    /** Records changes in the caller's transaction: they commit, or vanish, with it. */
    async record(db: Db, entries: readonly NewChange[]): Promise<void> {
      for (let i = 0; i < entries.length; i += chunk) await db.insertInto('changes').values(entries.slice(i, i + chunk)).execute();
    },

    /**
     * Positioned changes after `after` of the sessions of `orgIds` and the tasks of
     * `ownerId`, in commit order, at most `limit`: one index stream per org and one for the
     * owner's tasks, merged. A committed change not positioned yet comes in a later read,
     * after everything read now. The streams are separate statements: on PostgreSQL each
     * may see a later commit of the sequencer than the one before it, so a reader bounds
     * them by `upTo`, a head() read first (every position up to it is committed and seen by
     * every later statement); otherwise one stream could run past positions another missed.
     */
    async after(q: { orgIds: readonly number[]; ownerId: number; after: number; upTo?: number; limit: number }): Promise<PositionedChange[]> {
      const base = () => {
        const query = storage.db.selectFrom('changes').selectAll().where('changes.position', '>', q.after);
        return q.upTo === undefined ? query : query.where('changes.position', '<=', q.upTo);
      };
      const streams = await Promise.all([
        ...q.orgIds.map((orgId) => base().where('changes.org_id', '=', orgId).orderBy('changes.position').limit(q.limit).execute()),
        base().where('changes.owner_id', '=', q.ownerId).where('changes.kind', '=', 'task').orderBy('changes.position').limit(q.limit).execute(),
      ]);
      const rows = [...new Map(streams.flat().map((r) => [r.id, r as PositionedChange])).values()];
      return rows.sort((a, b) => a.position - b.position).slice(0, q.limit);
    },

    /** The newest position given (0: none yet): where a full sync continues from, and the bound of a read. */
    async head(): Promise<number> {
      const row = await storage.db.selectFrom('changes').select((eb) => eb.fn.max('position').as('top')).executeTakeFirst();
      return Number(row?.top ?? 0);
    },

    /**
     * Every positioned change after `after` (up to `upTo`, when given), whoever may see it, at
     * most `limit`: the one read an instance's event-stream poller makes for all its streams,
     * and the webhook fan-out's (one statement: a change has a position only once committed).
     */
    async allAfter(q: { after: number; upTo?: number; limit: number }): Promise<PositionedChange[]> {
      let query = storage.db.selectFrom('changes').selectAll().where('position', '>', q.after);
      if (q.upTo !== undefined) query = query.where('position', '<=', q.upTo);
      return (await query.orderBy('position').limit(q.limit).execute()) as PositionedChange[];
    },

    /**
     * Gives committed rows their position (commit order), so that a reader that follows
     * positions never passes a change that commits later: the classic trap of following
     * ids with several writers. Ids come from a sequence in insert order, but transactions
     * commit in another order; positions go only to rows already committed (the statement
     * sees nothing else), in id order above every position given before, one sequencer at
     * a time (whoever does not get the lock leaves the work to whoever has it). Where
     * writers take turns (SQLite) a row has its position, its id, as soon as it is written
     * (a trigger, migration 0008) and this does nothing. Returns how many rows it positioned.
     */
    async sequence(): Promise<number> {
      if (storage.serialWrites) return 0;
      const positioned = await storage.transactionIfFree('focus.changes', async (trx) => {
        const result = await sql`
          with batch as (select id, row_number() over (order by id) as rank from changes where position is null order by id limit 10000),
               top as (select coalesce(max(position), 0) as position from changes)
          update changes set position = top.position + batch.rank
          from batch, top
          where changes.id = batch.id`.execute(trx);
        return Number(result.numAffectedRows ?? 0);
      });
      return positioned ?? 0;
    },

    /** Deletes up to `limit` changes older than `before`; returns how many. */
    async purge(db: Db, q: { before: string; limit: number }): Promise<number> {
      const old = db.selectFrom('changes').select('id').where('changed_at', '<', q.before).orderBy('changed_at').limit(q.limit);
      const result = await db.deleteFrom('changes').where('id', 'in', old).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
