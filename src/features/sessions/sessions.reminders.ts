import { type JsonText, parseJson } from '../../storage/columns.js';
import { homeOffsetsInUse, homeRemindersOf } from '../auth/auth.principals.js';
import type { SessionsContext } from './sessions.context.js';
import type { IndexedInstant } from './sessions.instant-reads.js';
import { involvedUsers } from './sessions.occurrence-source.js';
import { ONE_OFF } from './sessions.occurrences.js';
import { occurrenceKey } from './sessions.participants-repository.js';

const MINUTE_MS = 60_000;

/** One `session.starting` due: an occurrence, one person involved in it, and one offset of theirs (contract section 10). */
export interface Reminder {
  session_id: number;
  occurrence_date: string;
  starts_at: string;
  ends_at: string;
  org_id: number;
  user_id: number;
  minutes_before: number;
  /** The reminder's instant: `minutes_before` before `starts_at`. */
  at: string;
}

/** Every offset any user's home reminders or any session's own hold (two statements over their indexes). */
async function offsetsInUse(ctx: SessionsContext): Promise<number[]> {
  const { db } = ctx.storage;
  const [home, own] = await Promise.all([
    homeOffsetsInUse(db),
    db.selectFrom('sessions').select('reminders').distinct().where('reminders', 'is not', null).execute(),
  ]);
  const all = new Set(home);
  for (const row of own) if (row.reminders !== null) for (const m of parseJson(row.reminders)) all.add(m);
  return [...all].sort((a, b) => a - b);
}

/** The start instants (a, b] a reminder in (from, to] can belong to, one range per offset, touching ones joined. */
function startRanges(offsets: readonly number[], fromMs: number, toMs: number): [string, string][] {
  const ranges: [number, number][] = [];
  for (const m of offsets) {
    const [a, b] = [fromMs + m * MINUTE_MS, toMs + m * MINUTE_MS];
    const last = ranges.at(-1);
    if (last !== undefined && a <= last[1]) last[1] = Math.max(last[1], b);
    else ranges.push([a, b]);
  }
  return ranges.map(([a, b]) => [new Date(a).toISOString(), new Date(b).toISOString()]);
}

type Starting = IndexedInstant & { reminders: JsonText<number[]> | null };

/** Ranges one statement asks for: offsets in use across all users may be many, and SQLite bounds an expression's depth. */
const RANGES_PER_STATEMENT = 100;

/** Occurrences of the index starting in any of the ranges, with their session's own reminders: one statement per 100 ranges. */
async function startingIn(ctx: SessionsContext, ranges: readonly [string, string][]): Promise<Starting[]> {
  const chunks = Array.from({ length: Math.ceil(ranges.length / RANGES_PER_STATEMENT) }, (_, i) => ranges.slice(i * RANGES_PER_STATEMENT, (i + 1) * RANGES_PER_STATEMENT));
  const found = await Promise.all(
    chunks.map((chunk) =>
      ctx.storage.db
        .selectFrom('session_occurrences as o')
        .innerJoin('sessions as s', 's.id', 'o.session_id')
        .select(['o.session_id', 'o.occurrence_date', 'o.starts_at', 'o.ends_at', 'o.org_id', 'o.created_by', 's.reminders'])
        .where((eb) => eb.or(chunk.map(([a, b]) => eb.and([eb('o.starts_at', '>', a), eb('o.starts_at', '<=', b)]))))
        .execute(),
    ),
  );
  return found.flat();
}

/**
 * The reminders whose instant is in (from, to], in time order: for each occurrence of the
 * index starting within an offset in use of the window, each person involved in it
 * (involvedUsers) with each offset that applies to them, the session's own or else their
 * home ones, whose instant falls in the window. A fixed number of statements per window.
 */
export async function remindersIn(ctx: SessionsContext, q: { from: string; to: string }): Promise<Reminder[]> {
  const [fromMs, toMs] = [Date.parse(q.from), Date.parse(q.to)];
  if (!(toMs > fromMs)) return [];
  const offsets = await offsetsInUse(ctx);
  if (offsets.length === 0) return [];
  const rows = await startingIn(ctx, startRanges(offsets, fromMs, toMs));
  if (rows.length === 0) return [];
  const involvement = new Map<string, Set<number>>();
  for (const r of await ctx.instants.involvement(rows.map((o) => o.session_id))) {
    const key = occurrenceKey(r.session_id, r.occurrence_date ?? ONE_OFF);
    involvement.set(key, (involvement.get(key) ?? new Set()).add(r.user_id));
  }
  const people = rows.map((o) => ({ o, own: o.reminders === null ? null : parseJson(o.reminders), users: involvedUsers(o, involvement) }));
  const home = await homeRemindersOf(ctx.storage.db, people.filter((p) => p.own === null).flatMap((p) => [...p.users]));
  const out: Reminder[] = [];
  for (const { o, own, users } of people) {
    for (const user_id of users) {
      for (const minutes_before of own ?? home.get(user_id) ?? []) {
        const atMs = Date.parse(o.starts_at) - minutes_before * MINUTE_MS;
        if (atMs <= fromMs || atMs > toMs) continue;
        const { session_id, occurrence_date, starts_at, ends_at, org_id } = o;
        out.push({ session_id, occurrence_date, starts_at, ends_at, org_id, user_id, minutes_before, at: new Date(atMs).toISOString() });
      }
    }
  }
  return out.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.session_id - b.session_id));
}
