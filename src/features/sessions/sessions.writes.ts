import { sql } from 'kysely';
import type { Db } from '../../storage/database.js';
import type { NewSession } from '../../storage/tables.js';

/** The sessions repository's writes (sessions.repository.ts spreads them into the repository); each runs in the caller's transaction. */
export const sessionWrites = {
  async insert(db: Db, values: NewSession): Promise<number> {
    const row = await db.insertInto('sessions').values(values).returning('id').executeTakeFirstOrThrow();
    return row.id;
  },

  /** A change that moves updated_at is a change calendar apps must see: it bumps the session's SEQUENCE. */
  async update(db: Db, id: number, values: Partial<NewSession>): Promise<void> {
    const bump = values.updated_at === undefined ? {} : { sequence: sql<number>`${sql.ref('sequence')} + 1` };
    await db.updateTable('sessions').set({ ...values, ...bump }).where('id', '=', id).execute();
  },

  async replaceCollaborators(db: Db, q: { sessionId: number; userIds: readonly number[] }): Promise<void> {
    await db.deleteFrom('session_collaborators').where('session_id', '=', q.sessionId).execute();
    if (q.userIds.length > 0) {
      await db
        .insertInto('session_collaborators')
        .values(q.userIds.map((user_id) => ({ session_id: q.sessionId, user_id })))
        .execute();
    }
  },

  /**
   * Detaches the tasks of a session about to be deleted (contract section 3: their owners
   * keep them, with session_id null). Done here rather than left to the foreign key's
   * `on delete set null`, which changes the rows without a new version or updated_at, so
   * that the change log, ETags and webhooks tell each owner. Returns the tasks and owners.
   */
  async releaseTasks(db: Db, q: { sessionId: number; now: string }): Promise<{ id: number; owner_id: number }[]> {
    return db
      .updateTable('tasks')
      .set((eb) => ({ session_id: null, updated_at: q.now, version: eb('version', '+', 1) }))
      .where('session_id', '=', q.sessionId)
      .returning(['id', 'owner_id'])
      .execute();
  },

  async delete(db: Db, id: number): Promise<void> {
    await db.deleteFrom('sessions').where('id', '=', id).execute();
  },

  /** Forgets a session's removed occurrences: switching a series off clears its recurrence (contract section 6). */
  async clearExceptions(db: Db, sessionId: number): Promise<void> {
    await db.deleteFrom('session_exceptions').where('session_id', '=', sessionId).execute();
  },

  /** Hands the participation, overrides and removed days from `date` on to the series split from `from` ("this and following"). */
  async moveOccurrences(db: Db, q: { from: number; to: number; date: string }): Promise<void> {
    await db.updateTable('session_participants').set({ session_id: q.to }).where('session_id', '=', q.from).where('occurrence_date', '>=', q.date).execute();
    await db.updateTable('session_overrides').set({ session_id: q.to }).where('session_id', '=', q.from).where('occurrence_date', '>=', q.date).execute();
    await db.updateTable('session_exceptions').set({ session_id: q.to }).where('session_id', '=', q.from).where('occurrence_date', '>=', q.date).execute();
  },

  /** Records a removed occurrence of a series; the caller removes its participation and index row. */
  async addException(db: Db, q: { sessionId: number; date: string }): Promise<void> {
    await db
      .insertInto('session_exceptions')
      .values({ session_id: q.sessionId, occurrence_date: q.date })
      .onConflict((oc) => oc.columns(['session_id', 'occurrence_date']).doNothing())
      .execute();
  },
};
