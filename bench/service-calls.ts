/**
 * Everything the bench takes from `src/`, in one place: when `src/` moves or renames
 * something, this is the one file to fix. The rest of `bench/` drives the service over
 * HTTP, or reaches the database through what is exported here.
 */
import { createAuthService } from '../src/features/auth/auth.service.js';
import type { ListSessionsQuery } from '../src/features/sessions/sessions.route-schema.js';
import { type SessionsApi, sessionsApi } from '../src/features/sessions/sessions.api.js';
import { createStatsReader } from '../src/features/stats/stats.reader.js';
import type { StatsQuery } from '../src/features/stats/stats.schema.js';
import { createTasksService } from '../src/features/tasks/tasks.service.js';
import { type Storage, openStorage as open } from '../src/storage/database.js';

export { generateToken, hashToken } from '../src/features/auth/auth.token.js';
export { addDays } from '../src/features/recurrence/recurrence.dates.js';
export { type SessionModel, sessionColumns } from '../src/features/sessions/sessions.api.js';
/** A session's writable state with every optional field at its default. */
export { MAX_REMOVED_OCCURRENCES, SESSION_DEFAULTS } from '../src/features/sessions/sessions.schema.js';
export { MAX_SNOOZE_APPS_BYTES, MAX_WEBSITE_BLOCKER_BYTES } from '../src/features/sessions/sessions.blocker-schema.js';
export { MAX_TASK_PAGE } from '../src/features/tasks/tasks.schema.js';
/** SQLite: past this many pages in the write-ahead log, a commit checkpoints on the event loop. */
export { BACKSTOP_CHECKPOINT_PAGES } from '../src/storage/sqlite/sqlite.checkpointer.js';
export { walIndexReader } from '../src/storage/sqlite/sqlite.wal-index.js';
export { MAX_WEBHOOKS_PER_USER } from '../src/features/webhooks/webhooks.events.js';
/** The Node flags `focus serve` runs with: the bench starts the service the same way. */
export { SERVE_NODE_FLAGS } from '../src/cli/cli.runtime.js';
export { sourceIdColumns } from '../src/features/tasks/tasks.model.js';
export type { Storage } from '../src/storage/database.js';
export type { Database } from '../src/storage/tables.js';

export const openStorage = (url: string, options: { poolSize?: number; statementTimeoutMs?: number } = {}) => open({ databaseUrl: url, ...options });
export const migrateToLatest = (storage: Storage) => storage.migrate();

/**
 * The schema the migration measurement starts from: the bench copies the seeded rows into
 * a database migrated only this far, then times `migrateToLatest` on it (what upgrading a
 * populated production database costs). Released migration names never change.
 */
export const MIGRATION_BASE = '0001_initial';

/** Migrates an empty database to MIGRATION_BASE only, with the bookkeeping migrateToLatest expects. */
export async function migrateToBase(storage: Storage): Promise<void> {
  await storage.migrate(MIGRATION_BASE);
}

/** Adds a member of `orgIds` per handle, each with a token of its own: the tokens, in order. */
export async function addMembers(storage: Storage, handles: readonly string[], orgIds: readonly number[]): Promise<string[]> {
  const auth = createAuthService(storage);
  const tokens: string[] = [];
  for (const handle of handles) {
    await auth.addUser(handle, [...orgIds]);
    tokens.push((await auth.issueToken(handle)).token);
  }
  return tokens;
}

/** Sessions indexed per step while seeding: large, since nothing else runs meanwhile. */
const INDEX_BATCH = 2_000;

/**
 * Runs after the seeder's plain inserts, timed as its own seed step: what the server's
 * background indexer does at start-up, the occurrence index of every seeded session (its
 * first-occurrence instants and rrule too), then fresh planner statistics.
 */
export async function afterSeed(storage: Storage): Promise<void> {
  const sessions = sessionsApi(storage);
  while ((await sessions.indexStep(INDEX_BATCH)) > 0);
  await storage.refreshStatistics();
}

/** One service call whose statements the bench captures and explains; query values as in the URL. */
export type ServiceCall =
  | { kind: 'authenticate' }
  | { kind: 'listTasks'; query: Record<string, string> }
  | { kind: 'listSessions'; query: Record<string, string> }
  | { kind: 'getSession'; id: number }
  | { kind: 'myStats'; query: StatsQuery }
  | { kind: 'orgStats'; orgId: number; query: StatsQuery };

const NUMERIC_PARAMS = new Set(['limit', 'completed', 'org_id', 'session_id']);

/** URL query values → the typed query the service receives after validation. */
function typedQuery<T>(query: Record<string, string>): T {
  return Object.fromEntries(Object.entries(query).map(([k, v]) => [k, NUMERIC_PARAMS.has(k) ? Number(v) : v])) as T;
}

/** One sessions service per storage, as the server has: calls on the same storage share what it remembers. */
const sessionsOn = (storage: Storage): SessionsApi => sessionsApi(storage);

const statsOn = (storage: Storage) => createStatsReader(storage, { memberIds: (orgId) => createAuthService(storage).memberIds(orgId) });

/**
 * The call, ready to run in-process as the token's user against a given storage (the bench
 * passes a capturing one). The user is authenticated here, on `storage`, so that only the
 * call's own statements run on the storage given later (authentication is its own call).
 */
export async function prepareCall(storage: Storage, token: string, call: ServiceCall): Promise<(on: Storage) => Promise<unknown>> {
  if (call.kind === 'authenticate') return (on) => createAuthService(on).authenticate(token);
  const user = await createAuthService(storage).authenticate(token);
  if (user === undefined) throw new Error('the bench token does not authenticate');
  switch (call.kind) {
    case 'listTasks':
      return (on) => createTasksService(on).list(user, typedQuery(call.query));
    case 'listSessions':
      return (on) => sessionsOn(on).list(user, typedQuery<ListSessionsQuery>(call.query));
    case 'getSession':
      return (on) => sessionsOn(on).get(user, call.id);
    case 'myStats':
      return (on) => statsOn(on).mine(user, call.query);
    case 'orgStats':
      return (on) => statsOn(on).org(user, call.orgId, call.query);
    default: {
      const unreachable: never = call;
      throw new Error(`unknown call ${JSON.stringify(unreachable)}`);
    }
  }
}
