import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type pg from 'pg';
import { preparedName } from './prepared.js';

/**
 * Named (server-side prepared) statements for the statements prepared() reuses: PostgreSQL
 * parses and plans such a statement once per connection instead of on every call, which was
 * most of the database's CPU for a listing page (docs/performance.md, "Listings against a
 * plain server"). Every other statement runs unnamed, as before.
 */

/** Statements named per connection at most: the server keeps each one's plan until the connection closes. */
const MAX_NAMED_PER_CONNECTION = 500;

/** PostgreSQL refuses a named statement whose result columns changed since it was prepared (a migration added a column). */
const stalePlan = (error: unknown) => (error as { code?: string }).code === '0A000' && /cached plan must not change result type/.test(String((error as Error).message));

/** What each pooled connection has named, and the names it must no longer use. */
const named = new WeakMap<pg.PoolClient, { names: Set<string>; stale: Set<string> }>();

function namingClient(client: pg.PoolClient): PostgresPoolClient {
  let state = named.get(client);
  if (state === undefined) named.set(client, (state = { names: new Set(), stale: new Set() }));
  const own = state;
  async function query<R>(sql: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>> {
    const values = [...parameters];
    const name = preparedName(sql);
    const usable = name !== undefined && !own.stale.has(name) && (own.names.has(name) || own.names.size < MAX_NAMED_PER_CONNECTION);
    if (!usable) return (await client.query(sql, values)) as unknown as PostgresQueryResult<R>;
    own.names.add(name);
    try {
      return (await client.query({ name, text: sql, values })) as unknown as PostgresQueryResult<R>;
    } catch (error) {
      if (!stalePlan(error)) throw error;
      // This connection's copy is stale for good; run it unnamed from now on.
      own.stale.add(name);
      return (await client.query(sql, values)) as unknown as PostgresQueryResult<R>;
    }
  }
  return {
    query: ((sqlOrCursor: string | PostgresCursor<unknown>, parameters?: readonly unknown[]) =>
      typeof sqlOrCursor === 'string' ? query(sqlOrCursor, parameters ?? []) : client.query(sqlOrCursor as never)) as PostgresPoolClient['query'],
    release: (destroy?: boolean) => client.release(destroy),
  };
}

/** The pool as Kysely's PostgreSQL dialect takes it, naming prepared() statements. */
export function namingPool(pool: pg.Pool): PostgresPool {
  return {
    connect: async () => namingClient(await pool.connect()),
    end: () => pool.end(),
  };
}
