import { type Expression, sql } from 'kysely';
import type { Db } from '../../storage/database.js';
import { prepared } from '../../storage/prepared.js';

/** A (session, occurrence) pair as a map key. */
export const occurrenceKey = (sessionId: number, occurrenceDate: string) => `${sessionId}|${occurrenceDate}`;

/** The session and date an occurrenceKey names. */
export function parseOccurrenceKey(key: string): { sessionId: number; date: string } {
  const bar = key.indexOf('|');
  return { sessionId: Number(key.slice(0, bar)), date: key.slice(bar + 1) };
}

/**
 * The participants other than the host (`host`) of one occurrence, as a scalar subquery: what
 * a listing's statements read beside each key, so that a page needs no statement of counts.
 * PostgreSQL counts as bigint (a string on the wire): read it with Number().
 */
export const joinedCount = (sessionId: Expression<number>, date: Expression<string>, host: Expression<number>) =>
  sql<number | string>`(select count(*) from session_participants counted where counted.session_id = ${sessionId} and counted.occurrence_date = ${date} and counted.user_id <> ${host})`;

/** Users per statement in ofUsers. */
const USERS_PER_READ = 500;

export type ParticipantsRepository = ReturnType<typeof createParticipantsRepository>;

/** The statement of counts: both lists distinct and not empty. */
const countsQuery = prepared(['sessionIds', 'dates'], (db, q: { sessionIds: readonly number[]; dates: readonly string[] }) =>
  db
    .selectFrom('session_participants as sp')
    .innerJoin('sessions', 'sessions.id', 'sp.session_id')
    .select(['sp.session_id', 'sp.occurrence_date', (eb) => eb.fn.countAll<number>().as('n')])
    .where('sp.session_id', 'in', q.sessionIds)
    .where('sp.occurrence_date', 'in', q.dates)
    .whereRef('sp.user_id', '<>', 'sessions.created_by')
    .groupBy(['sp.session_id', 'sp.occurrence_date']),
  { named: true },
);

/** Who joined and completed which occurrence. Participation rows of a one-off session use the ONE_OFF date. */
export function createParticipantsRepository() {
  return { ...participationReads(), ...participationWrites() };
}

/** Counts, rows and host completions of occurrences. */
function participationReads() {
  return {
    /**
     * Participants other than the host, per (session, occurrence) key, for the given
     * occurrences (a long series has many; only the ones shown are counted).
     */
    async counts(db: Db, keys: readonly { sessionId: number; occurrenceDate: string }[]): Promise<Map<string, number>> {
      const out = new Map<string, number>();
      if (keys.length === 0) return out;
      const rows = await countsQuery.execute(db, { sessionIds: [...new Set(keys.map((k) => k.sessionId))], dates: [...new Set(keys.map((k) => k.occurrenceDate))] });
      for (const r of rows) out.set(occurrenceKey(r.session_id, r.occurrence_date), Number(r.n));
      return out;
    },

    /**
     * Every participation row of the given users in the given sessions, any occurrence: what
     * the event streams of many readers need to tell visibility and participation at once.
     * Chunked by user, so that a thousand readers stay within a statement's parameters.
     */
    async ofUsers(db: Db, q: { userIds: readonly number[]; sessionIds: readonly number[] }) {
      const sessionIds = [...new Set(q.sessionIds)];
      const userIds = [...new Set(q.userIds)];
      if (sessionIds.length === 0 || userIds.length === 0) return [];
      const reads = [];
      for (let i = 0; i < userIds.length; i += USERS_PER_READ) {
        reads.push(
          db
            .selectFrom('session_participants')
            .select(['session_id', 'user_id', 'occurrence_date', 'joined_at', 'completed_at'])
            .where('session_id', 'in', sessionIds)
            .where('user_id', 'in', userIds.slice(i, i + USERS_PER_READ))
            .execute(),
        );
      }
      return (await Promise.all(reads)).flat();
    },

    /** The user's participation rows among the given occurrences, by occurrenceKey. */
    async ofUser(db: Db, q: { userId: number; keys: readonly { sessionId: number; date: string }[] }) {
      const out = new Map<string, { joined_at: string; completed_at: string | null }>();
      if (q.keys.length === 0) return out;
      const rows = await db
        .selectFrom('session_participants')
        .select(['session_id', 'occurrence_date', 'joined_at', 'completed_at'])
        .where('user_id', '=', q.userId)
        .where('session_id', 'in', [...new Set(q.keys.map((k) => k.sessionId))])
        .where('occurrence_date', 'in', [...new Set(q.keys.map((k) => k.date))])
        .execute();
      for (const r of rows) out.set(occurrenceKey(r.session_id, r.occurrence_date), { joined_at: r.joined_at, completed_at: r.completed_at });
      return out;
    },

    async of(db: Db, q: { sessionId: number; date: string; userId: number }) {
      return db
        .selectFrom('session_participants')
        .select(['joined_at', 'completed_at'])
        .where('session_id', '=', q.sessionId)
        .where('occurrence_date', '=', q.date)
        .where('user_id', '=', q.userId)
        .executeTakeFirst();
    },

    /** Occurrences of the given series in [from, to] the host has completed, by key. */
    async hostCompletions(db: Db, q: { sessionIds: readonly number[]; from: string; to: string }): Promise<Set<string>> {
      if (q.sessionIds.length === 0) return new Set();
      const rows = await db
        .selectFrom('session_participants as sp')
        .innerJoin('sessions', 'sessions.id', 'sp.session_id')
        .select(['sp.session_id', 'sp.occurrence_date'])
        .where('sp.session_id', 'in', [...new Set(q.sessionIds)])
        .where('sp.occurrence_date', '>=', q.from)
        .where('sp.occurrence_date', '<=', q.to)
        .whereRef('sp.user_id', '=', 'sessions.created_by')
        .where('sp.completed_at', 'is not', null)
        .execute();
      return new Set(rows.map((r) => occurrenceKey(r.session_id, r.occurrence_date)));
    },
  };
}

/** Joins, leaves, completions, and forgetting the participation of occurrences that are gone. */
function participationWrites() {
  return {
    /** Forgets participation in one occurrence (it was removed). */
    async remove(db: Db, q: { sessionId: number; date: string }): Promise<void> {
      await db.deleteFrom('session_participants').where('session_id', '=', q.sessionId).where('occurrence_date', '=', q.date).execute();
    },

    /**
     * Forgets participation in the occurrences of a session for which `exists` is false: a
     * change of its pattern removed them, and a join kept there would keep a private session
     * visible to someone who can no longer leave it. Returns the dates forgotten.
     */
    async keepOnly(db: Db, q: { sessionId: number; exists: (date: string) => boolean }): Promise<string[]> {
      const rows = await db.selectFrom('session_participants').select('occurrence_date').distinct().where('session_id', '=', q.sessionId).execute();
      const gone = rows.map((r) => r.occurrence_date).filter((date) => !q.exists(date));
      for (let i = 0; i < gone.length; i += 500) {
        await db.deleteFrom('session_participants').where('session_id', '=', q.sessionId).where('occurrence_date', 'in', gone.slice(i, i + 500)).execute();
      }
      return gone;
    },

    /** Forgets participation in the occurrences on or after `date` (they no longer exist). */
    async deleteFrom(db: Db, q: { sessionId: number; date: string }): Promise<void> {
      await db.deleteFrom('session_participants').where('session_id', '=', q.sessionId).where('occurrence_date', '>=', q.date).execute();
    },

    /** Joins idempotently: a second join keeps the first joined_at. */
    async join(db: Db, q: { sessionId: number; date: string; userId: number; now: string }): Promise<void> {
      await db
        .insertInto('session_participants')
        .values({ session_id: q.sessionId, occurrence_date: q.date, user_id: q.userId, joined_at: q.now, completed_at: null })
        .onConflict((oc) => oc.columns(['session_id', 'occurrence_date', 'user_id']).doNothing())
        .execute();
    },

    async leave(db: Db, q: { sessionId: number; date: string; userId: number }): Promise<void> {
      await db
        .deleteFrom('session_participants')
        .where('session_id', '=', q.sessionId)
        .where('occurrence_date', '=', q.date)
        .where('user_id', '=', q.userId)
        .execute();
    },

    async complete(db: Db, q: { sessionId: number; date: string; userId: number; now: string }): Promise<void> {
      await db
        .insertInto('session_participants')
        .values({ session_id: q.sessionId, occurrence_date: q.date, user_id: q.userId, joined_at: q.now, completed_at: q.now })
        .onConflict((oc) =>
          oc.columns(['session_id', 'occurrence_date', 'user_id']).doUpdateSet({
            completed_at: sql<string>`coalesce(session_participants.completed_at, ${q.now})`,
          }),
        )
        .execute();
    },
  };
}
