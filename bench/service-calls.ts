/**
 * Everything the bench takes from `src/`, in one place: when `src/` moves or renames
 * something, this is the one file to fix. The rest of `bench/` drives the service over
 * HTTP, or reaches the database through what is exported here.
 */
import { Migrator } from 'kysely';
import { authenticate } from '../src/features/auth/auth.service.js';
import { DEFAULTS, type SessionModel, columnsOf } from '../src/features/sessions/sessions.model.js';
import type { ListSessionsQuery } from '../src/features/sessions/sessions.schema.js';
import { getSession, listSessions } from '../src/features/sessions/sessions.service.js';
import { listTasks } from '../src/features/tasks/tasks.service.js';
import type { Storage } from '../src/storage/database.js';
import * as initialMigration from '../src/storage/migrations/0001_initial.js';

export { generateToken, hashToken } from '../src/features/auth/auth.token.js';
export { addDays } from '../src/features/recurrence/recurrence.dates.js';
export { openStorage, type Storage } from '../src/storage/database.js';
export { migrateToLatest } from '../src/storage/migrator.js';
export type { Database } from '../src/storage/tables.js';
export type { SessionModel };

/** A session's writable state with every optional field at its default. */
export const SESSION_DEFAULTS = DEFAULTS;

/** The `sessions` columns the service itself would store for a model (starts_at, ends_at, JSON text…). */
export const sessionColumns = columnsOf;

/**
 * The schema the migration measurement starts from: the bench copies the seeded rows into
 * a database migrated only this far, then times `migrateToLatest` on it (what upgrading a
 * populated production database costs). Released migration names never change.
 */
export const MIGRATION_BASE = '0001_initial';

/** Migrates an empty database to MIGRATION_BASE only, with the bookkeeping migrateToLatest expects. */
export async function migrateToBase(storage: Storage): Promise<void> {
  const result = await storage.dialect.withMigrationLock(storage.db, (db, schema) =>
    new Migrator({
      db,
      provider: { getMigrations: () => Promise.resolve({ [MIGRATION_BASE]: { up: (d) => initialMigration.up(d, storage.dialect) } }) },
      ...(schema === undefined ? {} : { migrationTableSchema: schema }),
    }).migrateToLatest(),
  );
  if (result.error !== undefined) throw result.error instanceof Error ? result.error : new Error(`migration to ${MIGRATION_BASE} failed: ${JSON.stringify(result.error)}`);
}

/**
 * Runs after the seeder's plain inserts, timed as its own seed step. The place to fill
 * whatever the service derives from sessions inside its own write transactions (an
 * occurrence index, a search table) that plain inserts do not; nothing today.
 */
export async function afterSeed(_storage: Storage): Promise<void> {
  // Nothing is derived today.
}

/** One service call whose statements the bench captures and explains; query values as in the URL. */
export type ServiceCall =
  | { kind: 'authenticate' }
  | { kind: 'listTasks'; query: Record<string, string> }
  | { kind: 'listSessions'; query: Record<string, string> }
  | { kind: 'getSession'; id: number };

const NUMERIC_PARAMS = new Set(['limit', 'completed', 'org_id', 'session_id']);

/** URL query values → the typed query the service receives after validation. */
function typedQuery<T>(query: Record<string, string>): T {
  return Object.fromEntries(Object.entries(query).map(([k, v]) => [k, NUMERIC_PARAMS.has(k) ? Number(v) : v])) as T;
}

/**
 * The call, ready to run in-process as the token's user against a given storage (the bench
 * passes a capturing one). The user is authenticated here, on `storage`, so that only the
 * call's own statements run on the storage given later (authentication is its own call).
 */
export async function prepareCall(storage: Storage, token: string, call: ServiceCall): Promise<(on: Storage) => Promise<unknown>> {
  if (call.kind === 'authenticate') return (on) => authenticate(on, token);
  const user = await authenticate(storage, token);
  if (user === undefined) throw new Error('the bench token does not authenticate');
  switch (call.kind) {
    case 'listTasks':
      return (on) => listTasks(on, user, typedQuery(call.query));
    case 'listSessions':
      return (on) => listSessions(on, user, typedQuery<ListSessionsQuery>(call.query));
    case 'getSession':
      return (on) => getSession(on, user, call.id);
    default: {
      const unreachable: never = call;
      throw new Error(`unknown call ${JSON.stringify(unreachable)}`);
    }
  }
}
