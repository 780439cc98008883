/**
 * Seeds a realistic data set through our own storage layer (openStorage +
 * migrateToLatest + Kysely multi-row inserts in transactions), so the bench
 * measures the schema and indexes the service really ships with.
 */
import { sql } from 'kysely';
import { generateToken, hashToken } from '../src/features/auth/auth.token.js';
import { type SessionModel, columnsOf } from '../src/features/sessions/sessions.model.js';
import { SESSION_DEFAULTS } from '../src/features/sessions/sessions.schema.js';
import type { Storage } from '../src/storage/database.js';
import type { Database } from '../src/storage/tables.js';
import { addDays } from '../src/features/recurrence/recurrence.dates.js';
import type { Insertable } from 'kysely';

export interface SeedSizes {
  orgs: number;
  users: number;
  sessions: number;
  recurringShare: number;
  tasks: number;
}

export function sizesFor(scale: number): SeedSizes {
  return {
    // Orgs grow with the data so that per-org density (what the queries see) stays realistic.
    orgs: Math.max(2, Math.round(50 * scale)),
    users: Math.max(20, Math.round(1_000 * scale)),
    sessions: Math.max(1_000, Math.round(200_000 * scale)),
    recurringShare: 0.2,
    tasks: Math.max(2_000, Math.round(500_000 * scale)),
  };
}

/** The users the scenarios act as, with their tokens and some of their rows. */
export interface SeedResult {
  sizes: SeedSizes;
  seconds: number;
  rows: number;
  /** Owns exactly 50 tasks, member of orgs 1 and 2. */
  reader: { id: number; handle: string; token: string };
  /** Imports in bulk (pre-seeded with source_ids 0..499 of source `bench`). */
  importer: { id: number; handle: string; token: string };
  /** Creates and updates single tasks. */
  writer: { id: number; handle: string; token: string; taskIds: number[] };
  /** Tokens of ordinary users, for the mixed workload. */
  others: { id: number; handle: string; token: string }[];
  /** Sessions visible to every special user (public, org 1), one-off and recurring. */
  sessionIds: { oneOff: number[]; recurring: number[] };
  /** A keyword that matches a few percent of session names. */
  keyword: string;
  /** A date and a 31-day range that hit many sessions. */
  date: string;
  range: { from: string; to: string };
}

/** Deterministic PRNG (mulberry32): the same scale seeds the same data. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ['deep', 'work', 'writing', 'review', 'planning', 'study', 'design', 'reading', 'coding', 'sprint', 'focus', 'inbox',
  'research', 'standup', 'retro', 'budget', 'hiring', 'roadmap', 'docs', 'testing', 'triage', 'release', 'pairing', 'math'];
const ZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Tokyo', 'Australia/Sydney', 'America/Los_Angeles'];
const FIRST_DAY = '2026-01-01';
const SPAN_DAYS = 730;

async function insertChunked<T extends keyof Database>(
  storage: Storage,
  table: T,
  rows: Insertable<Database[T]>[],
  columns: number,
): Promise<void> {
  if (rows.length === 0) return;
  const started = performance.now();
  // Stay under the driver's bound-parameter limit; bigger statements bring nothing more.
  const chunk = Math.max(1, Math.min(2_000, Math.floor(storage.maxParameters / columns)));
  await storage.transaction(async (trx) => {
    for (let i = 0; i < rows.length; i += chunk) {
      await trx.insertInto(table).values(rows.slice(i, i + chunk)).execute();
    }
  });
  const spent = tableSeconds.get(table) ?? { rows: 0, seconds: 0 };
  tableSeconds.set(table, { rows: spent.rows + rows.length, seconds: spent.seconds + (performance.now() - started) / 1000 });
}

const timings: string[] = [];
const tableSeconds = new Map<string, { rows: number; seconds: number }>();
/** Rows generated before they are written: bounds the seeder's memory at any scale. */
const BATCH = 100_000;

export async function seed(storage: Storage, scale: number, log: (line: string) => void): Promise<SeedResult> {
  const started = performance.now();
  const sizes = sizesFor(scale);
  const rand = rng(20261125);
  const pick = <V>(xs: readonly V[]): V => xs[Math.floor(rand() * xs.length)] as V;
  const now = new Date().toISOString();
  let rows = 0;
  if (storage.engine === 'sqlite') {
    // The seeding connection only: random-order index inserts into 500k rows thrash the default 2 MB page cache.
    await sql`pragma cache_size = -262144`.execute(storage.db);
  }

  // Orgs, users (ids 1..users), memberships: user u is in org (u % orgs) + 1; every tenth also in the next org.
  const orgs = Array.from({ length: sizes.orgs }, (_, i) => ({ id: i + 1, created_at: now }));
  const users = Array.from({ length: sizes.users }, (_, i) => ({ id: i + 1, handle: `user${i + 1}`, created_at: now }));
  const orgsOf = (u: number): number[] => {
    if (u <= 3) return [1, 2]; // the special users
    const home = (u % sizes.orgs) + 1;
    return u % 10 === 0 ? [home, (home % sizes.orgs) + 1] : [home];
  };
  const memberships = users.flatMap((u) => orgsOf(u.id).map((org_id) => ({ user_id: u.id, org_id })));
  const membersOf = new Map<number, number[]>();
  for (const m of memberships) membersOf.set(m.org_id, [...(membersOf.get(m.org_id) ?? []), m.user_id]);
  const tokens = users.map((u) => ({ userId: u.id, token: generateToken() }));
  await insertChunked(storage, 'orgs', orgs, 2);
  await insertChunked(storage, 'users', users, 3);
  await insertChunked(storage, 'memberships', memberships, 2);
  await insertChunked(
    storage,
    'tokens',
    tokens.map((t) => ({ id: t.userId, user_id: t.userId, name: 'bench', token_hash: hashToken(t.token), created_at: now })),
    5,
  );
  rows += orgs.length + users.length + memberships.length + tokens.length;

  // Sessions, built with the service's own model → columns mapping (so starts_at etc. are what the service would store).
  // Inserted in batches so that --scale 10 does not hold millions of row objects; only compact per-id facts stay.
  let sessions: Insertable<Database['sessions']>[] = [];
  const creatorOf = new Int32Array(sizes.sessions + 1);
  const seriesStart: (string | undefined)[] = [undefined];
  const recurringIds: number[] = [];
  const oneOffIds: number[] = [];
  const sessionOrg: number[] = [0];
  for (let id = 1; id <= sizes.sessions; id++) {
    const orgId = id <= 200 ? 1 + (id % 2) : 1 + Math.floor(rand() * sizes.orgs);
    const members = membersOf.get(orgId) ?? [1];
    const creator = pick(members);
    const schedule = addDays(FIRST_DAY, Math.floor(rand() * SPAN_DAYS));
    const recurring = rand() < sizes.recurringShare;
    const occurrence = recurring ? pick(['daily', 'weekly', 'weekly', 'weekly', 'monthly'] as const) : null;
    const model: SessionModel = {
      ...SESSION_DEFAULTS,
      collaborator: [],
      snooze_apps: { slack: true },
      recurring_days: [],
      org_id: orgId,
      name: `${pick(WORDS)} ${pick(WORDS)} ${id}`,
      type: rand() < 0.5 ? 'standard' : 'drop-in',
      duration: pick([25, 30, 45, 50, 60, 90]),
      schedule,
      // On the hour in working hours: what people book, and few distinct local times to resolve.
      time: (8 + Math.floor(rand() * 10)) * 60,
      timezone: pick(ZONES),
      is_public: id <= 200 || rand() < 0.5,
      status: rand() < 0.3 ? 'completed' : 'waiting',
      is_recurring: recurring ? 1 : 0,
      occurrence,
      recurring_start: recurring ? schedule : null,
      recurring_ends: recurring && rand() < 0.7 ? addDays(schedule, 30 + Math.floor(rand() * 150)) : null,
      ...(occurrence === 'weekly' ? { recurring_days: [1 + Math.floor(rand() * 5), 1 + Math.floor(rand() * 5)].sort().filter((d, i, a) => a.indexOf(d) === i) } : {}),
      ...(occurrence === 'monthly' ? { recurring_month_option: 'exact' as const } : {}),
    };
    sessions.push({ id, ...columnsOf(model, now), created_by: creator, created_at: now });
    sessionOrg.push(orgId);
    creatorOf[id] = creator;
    seriesStart.push(recurring ? schedule : undefined);
    if (sessions.length >= BATCH) {
      await insertChunked(storage, 'sessions', sessions, 30);
      sessions = [];
    }
    if (orgId === 1 && model.is_public) (recurring ? recurringIds : oneOffIds).push(id);
  }
  await insertChunked(storage, 'sessions', sessions, 30);
  rows += sizes.sessions;

  // A few collaborators and participants, so the visibility EXISTS clauses have data to look at.
  const collaborators: Insertable<Database['session_collaborators']>[] = [];
  const participants: Insertable<Database['session_participants']>[] = [];
  const seenPart = new Set<string>();
  for (let id = 1; id <= sizes.sessions; id++) {
    const members = membersOf.get(sessionOrg[id] as number) ?? [];
    const creator = creatorOf[id];
    if (rand() < 0.05) {
      const u = pick(members);
      if (u !== creator) collaborators.push({ session_id: id, user_id: u });
    }
    if (rand() < 0.1) {
      const u = pick(members);
      const date = seriesStart[id] ?? '';
      const key = `${id}|${date}|${u}`;
      if (!seenPart.has(key)) {
        seenPart.add(key);
        participants.push({ session_id: id, user_id: u, occurrence_date: date, joined_at: now, completed_at: null });
      }
    }
  }
  await insertChunked(storage, 'session_collaborators', collaborators, 2);
  await insertChunked(storage, 'session_participants', participants, 5);
  rows += collaborators.length + participants.length;

  // Tasks: 50 for the reader, 500 `bench` imports for the importer, 200 for the writer, the rest spread over everyone else.
  let tasks: Insertable<Database['tasks']>[] = [];
  let taskCount = 0;
  const sourceSeq = new Map<number, number>();
  const task = (owner: number, source: string | null, sourceId: number | null) => {
    const orgSessions = owner <= 3 ? oneOffIds : null;
    taskCount++;
    tasks.push({
      id: taskCount,
      owner_id: owner,
      context: `${pick(WORDS)} ${pick(WORDS)} ${pick(WORDS)} — item ${taskCount}`,
      is_completed: rand() < 0.4 ? 1 : 0,
      source,
      source_id: sourceId,
      session_id: orgSessions !== null && orgSessions.length > 0 ? pick(orgSessions) : 1 + Math.floor(rand() * sizes.sessions),
      created_at: now,
      updated_at: now,
    });
  };
  for (let i = 0; i < 50; i++) task(1, null, null);
  for (let i = 0; i < 500; i++) task(2, 'bench', i);
  for (let i = 0; i < 200; i++) task(3, null, null);
  while (taskCount < sizes.tasks) {
    if (tasks.length >= BATCH) {
      await insertChunked(storage, 'tasks', tasks, 10);
      tasks = [];
    }
    const owner = 4 + Math.floor(rand() * (sizes.users - 3));
    if (rand() < 0.3) {
      const next = sourceSeq.get(owner) ?? 0;
      sourceSeq.set(owner, next + 1);
      task(owner, rand() < 0.5 ? 'todoist' : 'linear', next);
    } else task(owner, null, null);
  }
  const writerFirst = 51 + 500;
  await insertChunked(storage, 'tasks', tasks, 10);
  rows += taskCount;

  const analyzeStarted = performance.now();
  if (storage.engine === 'postgres') {
    // Explicit ids bypass the identity sequences; move them past the seeded rows.
    for (const table of ['users', 'tokens', 'sessions', 'tasks'] as const) {
      await sql`select setval(pg_get_serial_sequence(${table}, 'id'), (select max(id) from ${sql.table(table)}))`.execute(storage.db);
    }
    await sql`analyze`.execute(storage.db);
  } else {
    await sql`analyze`.execute(storage.db);
    // Hand the service a checkpointed file: otherwise its first commit copies the whole seeded WAL back on its event loop.
    await sql`pragma wal_checkpoint(TRUNCATE)`.execute(storage.db);
  }

  timings.push(`analyze in ${((performance.now() - analyzeStarted) / 1000).toFixed(1)} s`);
  const tokenOf = (id: number) => (tokens[id - 1] as { token: string }).token;
  const seconds = (performance.now() - started) / 1000;
  const inserts = [...tableSeconds].map(([t, v]) => `${t} ${v.rows} in ${v.seconds.toFixed(1)} s`);
  tableSeconds.clear();
  log(`seed inserts: ${[...inserts, ...timings.splice(0)].join(', ')}`);
  log(`seeded ${rows.toLocaleString('en-US')} rows in ${seconds.toFixed(1)} s (${Math.round(rows / seconds).toLocaleString('en-US')} rows/s)`);
  return {
    sizes,
    seconds,
    rows,
    reader: { id: 1, handle: 'user1', token: tokenOf(1) },
    importer: { id: 2, handle: 'user2', token: tokenOf(2) },
    writer: { id: 3, handle: 'user3', token: tokenOf(3), taskIds: Array.from({ length: 200 }, (_, i) => writerFirst + i) },
    others: Array.from({ length: Math.min(50, sizes.users - 3) }, (_, i) => ({ id: 4 + i, handle: `user${4 + i}`, token: tokenOf(4 + i) })),
    sessionIds: { oneOff: oneOffIds, recurring: recurringIds },
    keyword: 'review',
    date: '2026-06-15',
    range: { from: '2026-06-01', to: '2026-07-01' },
  };
}
