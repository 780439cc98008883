/**
 * Seeds a realistic data set through our own storage layer (openStorage +
 * migrateToLatest + Kysely multi-row inserts in transactions), so the bench
 * measures the schema and indexes the service really ships with.
 */
import { type Insertable, sql } from 'kysely';
import {
  type Database,
  SESSION_DEFAULTS,
  type SessionModel,
  type Storage,
  addDays,
  afterSeed,
  generateToken,
  MAX_REMOVED_OCCURRENCES,
  hashToken,
  sessionColumns,
  sourceIdColumns,
} from './service-calls.js';
import { type Streaker, seedStreaker } from './seed-streaker.js';

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

/** The adversarial org (issue 12): daily series of one member that every listing of the org must get past. */
export const ADVERSARIAL_DAILY_SERIES = 10_000;
/**
 * Removed occurrences of the one series that has the most. The service does not cap them
 * yet; when a change does, set this to the cap.
 */
/** The adversarial series removes as many occurrences as the service allows one series. */
export { MAX_REMOVED_OCCURRENCES };
/** Tasks of the user behind the big-page `GET /tasks` scenario. */
export const HOARDER_TASKS = 1_000;
/** Sessions the planner owns in its own org before the write scenarios (half one-off, half series). */
const PLANNER_SESSIONS = 200;

export interface SeedOptions {
  /** Seed the adversarial org (10,000 daily series, one series with MAX_REMOVED_OCCURRENCES). */
  adversarial: boolean;
}

interface User {
  id: number;
  handle: string;
  token: string;
}

/** Rows and seconds of one timed insert step, by table (adversarial rows under their own label). */
export type TableTimings = Record<string, { rows: number; seconds: number }>;

/** The users the scenarios act as, with their tokens and some of their rows. */
export interface SeedResult {
  sizes: SeedSizes;
  seconds: number;
  rows: number;
  /** Seconds and rows of each insert step; `afterSeed` and `analyze` as steps of 0 rows. */
  tables: TableTimings;
  /** Owns exactly 50 tasks, member of orgs 1 and 2. */
  reader: User;
  /** Member of orgs 1 and 2 (creating nothing there) and of the adversarial org; undefined without it. */
  adversaryReader: User | undefined;
  /** Owns HOARDER_TASKS tasks. */
  hoarder: User;
  /** Imports in bulk (pre-seeded with source_ids 0..499 of source `bench`). */
  importer: User;
  /** Creates and updates single tasks. */
  writer: User & { taskIds: number[] };
  /** Creates and updates sessions in its own org (so that the listing orgs stay as seeded). */
  planner: User & { orgId: number; sessionIds: number[] };
  /** Completed a daily session and a task every day for ten years, alone in an org of its own (statistics). */
  streaker: Streaker;
  /** Tokens of ordinary users, for the mixed workload. */
  others: User[];
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
const DATE = '2026-06-15';
const RANGE = { from: '2026-06-01', to: '2026-07-01' };
/** The zone whose local days start first (UTC+14): its midnight sorts before every other session of that day. */
const EARLIEST_ZONE = 'Pacific/Kiritimati';

const dayNumber = (date: string): number => Date.parse(`${date}T00:00:00Z`) / 86_400_000;

async function insertChunked<T extends keyof Database>(
  storage: Storage,
  table: T,
  rows: Insertable<Database[T]>[],
  label: string = table,
): Promise<void> {
  if (rows.length === 0) return;
  const started = performance.now();
  // Stay under the driver's bound-parameter limit (counted from the rows: a table that gains a column stays within it); bigger statements bring nothing more.
  const columns = Math.max(...rows.slice(0, 100).map((r) => Object.keys(r).length));
  const chunk = Math.max(1, Math.min(2_000, Math.floor(storage.maxParameters / columns)));
  await storage.transaction(async (trx) => {
    for (let i = 0; i < rows.length; i += chunk) {
      await trx.insertInto(table).values(rows.slice(i, i + chunk)).execute();
    }
  });
  record(label, rows.length, started);
}

let tableTimings: TableTimings = {};
function record(label: string, rows: number, started: number): void {
  const spent = tableTimings[label] ?? { rows: 0, seconds: 0 };
  tableTimings[label] = { rows: spent.rows + rows, seconds: spent.seconds + (performance.now() - started) / 1000 };
}

/** Rows generated before they are written: bounds the seeder's memory at any scale. */
const BATCH = 100_000;

export async function seed(storage: Storage, scale: number, log: (line: string) => void, options: SeedOptions): Promise<SeedResult> {
  const started = performance.now();
  tableTimings = {};
  const sizes = sizesFor(scale);
  const rand = rng(20261125);
  const pick = <V>(xs: readonly V[]): V => xs[Math.floor(rand() * xs.length)] as V;
  const now = new Date().toISOString();
  let rows = 0;
  if (storage.engine === 'sqlite') {
    // The seeding connection only: random-order index inserts into 500k rows thrash the default 2 MB page cache.
    await sql`pragma cache_size = -262144`.execute(storage.db);
  }

  // Orgs 1..orgs, users 1..users: user u is in org (u % orgs) + 1; every tenth also in the next org.
  // The special users and orgs of the newer scenarios come after them, so the rows the older
  // scenarios read are the same as before they existed.
  const adversarialOrg = sizes.orgs + 1;
  const plannerOrg = sizes.orgs + 2;
  const special = { adversaryReader: sizes.users + 1, noisyMember: sizes.users + 2, hoarder: sizes.users + 3, planner: sizes.users + 4 };
  const WRITER = 3;
  const orgs = Array.from({ length: sizes.orgs + 2 }, (_, i) => ({ id: i + 1, created_at: now }));
  const users = Array.from({ length: sizes.users }, (_, i) => ({ id: i + 1, handle: `user${i + 1}`, created_at: now }));
  users.push(
    { id: special.adversaryReader, handle: 'adversary-reader', created_at: now },
    { id: special.noisyMember, handle: 'noisy-member', created_at: now },
    { id: special.hoarder, handle: 'hoarder', created_at: now },
    { id: special.planner, handle: 'planner', created_at: now },
  );
  const orgsOf = (u: number): number[] => {
    if (u <= 3) return [1, 2]; // the special users
    const home = (u % sizes.orgs) + 1;
    return u % 10 === 0 ? [home, (home % sizes.orgs) + 1] : [home];
  };
  const memberships = users.filter((u) => u.id <= sizes.users).flatMap((u) => orgsOf(u.id).map((org_id) => ({ user_id: u.id, org_id })));
  const membersOf = new Map<number, number[]>();
  for (const m of memberships) membersOf.set(m.org_id, [...(membersOf.get(m.org_id) ?? []), m.user_id]);
  // Not in membersOf: they create nothing in orgs 1..orgs.
  memberships.push(
    ...[1, 2, adversarialOrg].map((org_id) => ({ user_id: special.adversaryReader, org_id })),
    { user_id: special.noisyMember, org_id: adversarialOrg },
    { user_id: special.hoarder, org_id: 1 },
    { user_id: special.planner, org_id: plannerOrg },
    // The writer joins and leaves the planner's sessions (a participation write outside the listing orgs).
    { user_id: WRITER, org_id: plannerOrg },
  );
  const tokens = users.map((u) => ({ userId: u.id, token: generateToken() }));
  await insertChunked(storage, 'orgs', orgs);
  await insertChunked(storage, 'users', users);
  await insertChunked(storage, 'memberships', memberships);
  await insertChunked(
    storage,
    'tokens',
    tokens.map((t) => ({ id: t.userId, user_id: t.userId, name: 'bench', token_hash: hashToken(t.token), created_at: now })),
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
    sessions.push({ id, ...sessionColumns(model, now), created_by: creator, created_at: now });
    sessionOrg.push(orgId);
    creatorOf[id] = creator;
    seriesStart.push(recurring ? schedule : undefined);
    if (sessions.length >= BATCH) {
      await insertChunked(storage, 'sessions', sessions);
      sessions = [];
    }
    if (orgId === 1 && model.is_public) (recurring ? recurringIds : oneOffIds).push(id);
  }
  await insertChunked(storage, 'sessions', sessions);
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
  // One series in ten had one of its occurrences removed (deleted with scope=occurrence), so that removed
  // occurrences are spread as in real data and the planner's statistics of that table are not only the
  // adversarial series'. Its own PRNG: the rows drawn after it are what they were before it existed.
  const removed: Insertable<Database['session_exceptions']>[] = [];
  const removedRand = rng(7);
  for (let id = 1; id <= sizes.sessions; id++) {
    const start = seriesStart[id];
    if (start !== undefined && removedRand() < 0.1) removed.push({ session_id: id, occurrence_date: addDays(start, 7 * (1 + Math.floor(removedRand() * 4))) });
  }
  await insertChunked(storage, 'session_collaborators', collaborators);
  await insertChunked(storage, 'session_participants', participants);
  await insertChunked(storage, 'session_exceptions', removed);
  rows += collaborators.length + participants.length + removed.length;

  // Tasks: 50 for the reader, 500 `bench` imports for the importer, 200 for the writer, the rest spread over everyone else.
  let tasks: Insertable<Database['tasks']>[] = [];
  let taskCount = 0;
  const sourceSeq = new Map<number, number>();
  const task = (owner: number, source: string | null, sourceId: number | null) => {
    const orgSessions = owner <= 3 || owner === special.hoarder ? oneOffIds : null;
    taskCount++;
    tasks.push({
      id: taskCount,
      owner_id: owner,
      context: `${pick(WORDS)} ${pick(WORDS)} ${pick(WORDS)} — item ${taskCount}`,
      is_completed: rand() < 0.4 ? 1 : 0,
      source,
      ...sourceIdColumns(sourceId),
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
      await insertChunked(storage, 'tasks', tasks);
      tasks = [];
    }
    const owner = 4 + Math.floor(rand() * (sizes.users - 3));
    if (rand() < 0.3) {
      const next = sourceSeq.get(owner) ?? 0;
      sourceSeq.set(owner, next + 1);
      task(owner, rand() < 0.5 ? 'todoist' : 'linear', next);
    } else task(owner, null, null);
  }
  // After everyone else's, so that they keep the ids they had before the hoarder existed; a third imported, like the rest.
  for (let i = 0; i < HOARDER_TASKS; i++) task(special.hoarder, i % 3 === 0 ? 'todoist' : null, i % 3 === 0 ? i : null);
  const writerFirst = 51 + 500;
  await insertChunked(storage, 'tasks', tasks);
  rows += taskCount;

  // The planner's own sessions in its own org, the targets of PUT /sessions/{id}.
  const plannerIds: number[] = [];
  const plannerSessions: Insertable<Database['sessions']>[] = [];
  for (let i = 0; i < PLANNER_SESSIONS; i++) {
    const id = sizes.sessions + 1 + i;
    plannerIds.push(id);
    plannerSessions.push({
      id,
      ...sessionColumns(plannerModel(plannerOrg, `planned ${i}`, addDays(FIRST_DAY, (i * 7) % SPAN_DAYS), i % 2 === 1), now),
      created_by: special.planner,
      created_at: now,
    });
  }
  await insertChunked(storage, 'sessions', plannerSessions, 'sessions (planner)');
  rows += plannerSessions.length;

  if (options.adversarial) rows += await seedAdversarialOrg(storage, { org: adversarialOrg, member: special.noisyMember, firstId: sizes.sessions + PLANNER_SESSIONS + 1, now });

  // Last: every other row keeps the id it had before the statistics scenarios existed.
  const streakerStarted = performance.now();
  const streaker = await seedStreaker(storage, now);
  rows += streaker.rows;
  record('streaker (10 years of daily sessions)', streaker.rows, streakerStarted);

  const derivedStarted = performance.now();
  await afterSeed(storage);
  record('afterSeed (derived data)', 0, derivedStarted);

  const analyzeStarted = performance.now();
  if (storage.engine === 'postgres') {
    // Explicit ids bypass the identity sequences; move them past the seeded rows.
    for (const table of ['users', 'tokens', 'sessions', 'tasks'] as const) {
      await sql`select setval(pg_get_serial_sequence(${table}, 'id'), (select max(id) from ${sql.table(table)}))`.execute(storage.db);
    }
    // What autovacuum does to a running system after the indexer has updated every session
    // once. A server with autovacuum off (the service warns at start-up) keeps those dead
    // rows: at scale 0.25, 100,246 beside 50,200 live sessions slowed listings by a third.
    const { rows: tables } = await sql<{ name: string }>`select tablename as name from pg_tables where schemaname = current_schema()`.execute(storage.db);
    await sql`vacuum (analyze) ${sql.join(tables.map((t) => sql.table(t.name)))}`.execute(storage.db);
  } else {
    await sql`analyze`.execute(storage.db);
    // Hand the service a checkpointed file: otherwise its first commit copies the whole seeded WAL back on its event loop.
    await sql`pragma wal_checkpoint(TRUNCATE)`.execute(storage.db);
  }
  record('analyze', 0, analyzeStarted);

  const tokenOf = (id: number) => (tokens.find((t) => t.userId === id) as { token: string }).token;
  const user = (id: number): User => ({ id, handle: (users.find((u) => u.id === id) as { handle: string }).handle, token: tokenOf(id) });
  const seconds = (performance.now() - started) / 1000;
  const steps = Object.entries(tableTimings).map(([t, v]) =>
    v.rows === 0 ? `${t} in ${v.seconds.toFixed(1)} s` : `${t} ${v.rows} in ${v.seconds.toFixed(1)} s (${Math.round(v.rows / v.seconds).toLocaleString('en-US')}/s)`,
  );
  log(`seed inserts: ${steps.join(', ')}`);
  log(`seeded ${rows.toLocaleString('en-US')} rows in ${seconds.toFixed(1)} s (${Math.round(rows / seconds).toLocaleString('en-US')} rows/s)`);
  return {
    sizes,
    seconds,
    rows,
    tables: tableTimings,
    reader: user(1),
    adversaryReader: options.adversarial ? user(special.adversaryReader) : undefined,
    hoarder: user(special.hoarder),
    importer: user(2),
    writer: { ...user(WRITER), taskIds: Array.from({ length: 200 }, (_, i) => writerFirst + i) },
    planner: { ...user(special.planner), orgId: plannerOrg, sessionIds: plannerIds },
    streaker,
    others: Array.from({ length: Math.min(50, sizes.users - 3) }, (_, i) => user(4 + i)),
    sessionIds: { oneOff: oneOffIds, recurring: recurringIds },
    keyword: 'review',
    date: DATE,
    range: RANGE,
  };
}

/** What the planner books: a public 50-minute session at 9 AM in Berlin, or a daily series of it without an end. */
const PLANNED = { type: 'standard', duration: 50, minutes: 9 * 60, time: '9:00 AM', timezone: 'Europe/Berlin', is_public: true } as const;

function plannerModel(orgId: number, name: string, schedule: string, series: boolean): SessionModel {
  return {
    ...SESSION_DEFAULTS,
    collaborator: [],
    snooze_apps: {},
    recurring_days: [],
    org_id: orgId,
    name,
    type: PLANNED.type,
    duration: PLANNED.duration,
    schedule,
    time: PLANNED.minutes,
    timezone: PLANNED.timezone,
    is_public: PLANNED.is_public,
    ...(series ? { is_recurring: 1, occurrence: 'daily', recurring_start: schedule } : {}),
  };
}

/** The same booking as a `POST /sessions` body (the `i`th: dates spread over the seeded span). */
export function plannerBody(orgId: number, i: number, series: boolean): Record<string, unknown> {
  const { minutes: _minutes, ...wire } = PLANNED;
  return {
    ...wire,
    org_id: orgId,
    name: `booked ${i}`,
    schedule: addDays(FIRST_DAY, i % SPAN_DAYS),
    ...(series ? { is_recurring: 1, occurrence: 'daily' } : {}),
  };
}

/**
 * The adversarial org (issue 12): one member's ADVERSARIAL_DAILY_SERIES daily series, all
 * overlapping the bench's date and range, half of them private to that member; one in twenty
 * completed by its host on one day of the range (sparse, so a `completed=1` listing must look
 * far); and one public daily series with MAX_REMOVED_OCCURRENCES removed
 * occurrences (every other day), at local midnight in the earliest zone so that it is the
 * first item of every date, range and unfiltered page. Its own PRNG: the rest of the data
 * is the same with or without it.
 */
async function seedAdversarialOrg(storage: Storage, at: { org: number; member: number; firstId: number; now: string }): Promise<number> {
  const rand = rng(12);
  const pick = <V>(xs: readonly V[]): V => xs[Math.floor(rand() * xs.length)] as V;
  const rangeDays = dayNumber(RANGE.to) - dayNumber(RANGE.from) + 1;
  const sessions: Insertable<Database['sessions']>[] = [];
  const completions: Insertable<Database['session_participants']>[] = [];
  const base = (name: string): SessionModel => ({
    ...SESSION_DEFAULTS,
    timezone: 'UTC',
    collaborator: [],
    snooze_apps: { slack: true },
    recurring_days: [],
    org_id: at.org,
    name,
    type: 'standard',
    duration: 30,
    schedule: RANGE.from,
    time: 9 * 60,
    is_recurring: 1,
    occurrence: 'daily',
  });
  for (let i = 0; i < ADVERSARIAL_DAILY_SERIES; i++) {
    const id = at.firstId + i;
    const schedule = addDays(FIRST_DAY, Math.floor(rand() * (dayNumber(RANGE.from) - dayNumber(FIRST_DAY))));
    const model: SessionModel = {
      ...base(`${pick(WORDS)} ${pick(WORDS)} daily ${i}`),
      schedule,
      time: (8 + Math.floor(rand() * 10)) * 60,
      timezone: pick(ZONES),
      is_public: i % 2 === 0,
      recurring_start: schedule,
      recurring_ends: rand() < 0.3 ? addDays(RANGE.to, 30 + Math.floor(rand() * 300)) : null,
    };
    sessions.push({ id, ...sessionColumns(model, at.now), created_by: at.member, created_at: at.now });
    if (i % 20 === 0) {
      const day = addDays(RANGE.from, (i / 20) % rangeDays);
      completions.push({ session_id: id, user_id: at.member, occurrence_date: day, joined_at: at.now, completed_at: at.now });
    }
  }

  // Every other day from its start is removed; the range's first day and the bench date (an even number of days later) are kept.
  const exceptionsId = at.firstId + ADVERSARIAL_DAILY_SERIES;
  // Far enough back that the removed days, every other one, reach past the range.
  let start = addDays(RANGE.to, -2 * MAX_REMOVED_OCCURRENCES + 20);
  if ((dayNumber(RANGE.from) - dayNumber(start)) % 2 !== 0) start = addDays(start, 1);
  if ((dayNumber(DATE) - dayNumber(RANGE.from)) % 2 !== 0) throw new Error('the bench date must be an even number of days after the range start');
  if (2 * MAX_REMOVED_OCCURRENCES < dayNumber(RANGE.to) - dayNumber(start)) throw new Error('the removed occurrences must reach past the range');
  sessions.push({
    id: exceptionsId,
    ...sessionColumns({ ...base('review rescheduled daily'), schedule: start, recurring_start: start, time: 0, timezone: EARLIEST_ZONE, is_public: true }, at.now),
    created_by: at.member,
    created_at: at.now,
  });
  const exceptions = Array.from({ length: MAX_REMOVED_OCCURRENCES }, (_, k) => ({ session_id: exceptionsId, occurrence_date: addDays(start, 2 * k + 1) }));
  for (const day of [RANGE.from, DATE]) {
    completions.push({ session_id: exceptionsId, user_id: at.member, occurrence_date: day, joined_at: at.now, completed_at: at.now });
  }

  await insertChunked(storage, 'sessions', sessions, 'sessions (adversarial)');
  await insertChunked(storage, 'session_exceptions', exceptions, 'session_exceptions (adversarial)');
  await insertChunked(storage, 'session_participants', completions, 'session_participants (adversarial)');
  return sessions.length + exceptions.length + completions.length;
}
