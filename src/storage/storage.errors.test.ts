import net from 'node:net';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openStorage } from './database.js';
import { translatePostgresError } from './postgres.js';
import { openSqlite, sqlitePath } from './sqlite/sqlite.js';
import {
  ForeignKeyViolationError,
  StorageUnavailableError,
  TransactionConflictError,
  UniqueViolationError,
} from './storage.errors.js';
import { describeEachDialect, useStorageFixture } from '../../test/helpers/harness.js';

/*
 * Every mapping in translateError, checked against an error the real driver raised.
 * A mapping that only matches a hand-made error object proves nothing.
 */

async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the database to refuse');
}

const now = '2026-01-01T00:00:00.000Z';

describeEachDialect('storage error translation', (dialect) => {
  const fixture = useStorageFixture(dialect, now);

  it('a duplicate unique key is a UniqueViolationError', async () => {
    const error = await caught(fixture.storage.db.insertInto('users').values({ handle: 'ann', created_at: now }).execute());
    expect(error).toBeInstanceOf(UniqueViolationError);
    if (dialect === 'postgres') expect((error as UniqueViolationError).constraint).toBe('users_handle_key');
  });

  it('a duplicate primary key is a UniqueViolationError', async () => {
    await fixture.storage.db.insertInto('orgs').values({ id: 7, created_at: now }).execute();
    const error = await caught(fixture.storage.db.insertInto('orgs').values({ id: 7, created_at: now }).execute());
    expect(error).toBeInstanceOf(UniqueViolationError);
  });

  it('a dangling reference is a ForeignKeyViolationError', async () => {
    const error = await caught(fixture.storage.db.insertInto('memberships').values({ user_id: 999_999, org_id: 7 }).execute());
    expect(error).toBeInstanceOf(ForeignKeyViolationError);
  });

  it('an ordinary programming error is not translated (it must surface as a 500)', async () => {
    const error = await caught(sql`select * from no_such_table`.execute(fixture.storage.db));
    for (const storageError of [UniqueViolationError, ForeignKeyViolationError, TransactionConflictError, StorageUnavailableError]) {
      expect(error).not.toBeInstanceOf(storageError);
    }
    expect(error).toBeInstanceOf(Error);
  });

  it('a translated error keeps the driver error as its cause', async () => {
    const error = await caught(fixture.storage.db.insertInto('users').values({ handle: 'ann', created_at: now }).execute());
    expect(error).toBeInstanceOf(UniqueViolationError);
    expect((error as Error).cause).toBeInstanceOf(Error);
    expect((error as UniqueViolationError).code).toBe(dialect === 'postgres' ? '23505' : 'SQLITE_CONSTRAINT_UNIQUE');
  });

  if (dialect === 'sqlite') {
    it('SQLITE_BUSY past the busy timeout is a StorageUnavailableError', async () => {
      const path = sqlitePath(fixture.database.url);
      const holder = new BetterSqlite3(path);
      holder.exec('begin immediate');
      const impatient = openSqlite(fixture.database.url, { lockWaitMs: 20 });
      try {
        const error = await caught(
          impatient.db.transaction().execute((trx) => trx.insertInto('orgs').values({ id: 8, created_at: now }).execute()),
        );
        expect((error as { code?: string }).code).toBe('SQLITE_BUSY');
        expect(error).toBeInstanceOf(StorageUnavailableError);
      } finally {
        holder.exec('rollback');
        holder.close();
        await impatient.db.destroy();
      }
    });

    it('a read-only database is a StorageUnavailableError', async () => {
      const readOnly = openStorage({ databaseUrl: fixture.database.url });
      try {
        await sql`pragma query_only = 1`.execute(readOnly.db);
        const error = await caught(readOnly.db.insertInto('orgs').values({ id: 9, created_at: now }).execute());
        expect((error as { code?: string }).code).toBe('SQLITE_READONLY');
        expect(error).toBeInstanceOf(StorageUnavailableError);
      } finally {
        await readOnly.close();
      }
    });
  }

  if (dialect === 'postgres') {
    // A name of our own, so that terminating "our" connections never touches a colleague's.
    const appName = `focus-errors-${process.pid}`;
    const withAppName = (url: string) => {
      const u = new URL(url);
      u.searchParams.set('application_name', appName);
      return u.toString();
    };
    const admin = () => new pg.Client({ connectionString: fixture.database.url });

    it('a serialization failure is a TransactionConflictError, and transaction() retries it', async () => {
      const other = admin();
      await other.connect();
      try {
        const row = await fixture.storage.db.insertInto('users').values({ handle: 'ser', created_at: now }).returning('id').executeTakeFirstOrThrow();
        let attempts = 0;
        const seen: unknown[] = [];
        const result = await fixture.storage.transaction(async (trx) => {
          attempts++;
          await sql`set transaction isolation level repeatable read`.execute(trx);
          await sql`select count(*) from users`.execute(trx);
          // Someone else changes the row after our snapshot was taken: 40001 on the first attempt.
          if (attempts === 1) await other.query(`update users set created_at = 'x' where id = $1`, [row.id]);
          try {
            return await trx.updateTable('users').set({ created_at: 'y' }).where('id', '=', row.id).returning('created_at').executeTakeFirstOrThrow();
          } catch (error) {
            seen.push(error);
            throw error;
          }
        });
        expect(attempts).toBe(2);
        expect((seen[0] as { code?: string }).code).toBe('40001');
        expect(seen[0]).toBeInstanceOf(TransactionConflictError);
        expect(result.created_at).toBe('y');
      } finally {
        await other.end();
      }
    });

    it('a deadlock is a TransactionConflictError', async () => {
      await fixture.storage.db.insertInto('orgs').values([{ id: 101, created_at: now }, { id: 102, created_at: now }]).execute();
      // Two transactions of our own (without transaction()'s retry), each holding the row the other wants next.
      let locked = 0;
      let release: () => void = () => undefined;
      const barrier = new Promise<void>((r) => (release = r));
      const cross = (mine: number, theirs: number) =>
        fixture.storage.db.transaction().execute(async (trx) => {
          await sql`set local deadlock_timeout = '50ms'`.execute(trx);
          await trx.updateTable('orgs').set({ created_at: 'x' }).where('id', '=', mine).execute();
          if (++locked === 2) release();
          await barrier;
          await trx.updateTable('orgs').set({ created_at: 'y' }).where('id', '=', theirs).execute();
        });
      const results = await Promise.allSettled([cross(101, 102), cross(102, 101)]);
      const failure = results.find((r) => r.status === 'rejected');
      expect(failure).toBeDefined();
      const error = (failure as PromiseRejectedResult).reason as { code?: string };
      expect(error.code).toBe('40P01');
      expect(error).toBeInstanceOf(TransactionConflictError);
    });

    it('a connection killed mid-query is a StorageUnavailableError, and the pool recovers', async () => {
      const victim = openStorage({ databaseUrl: withAppName(fixture.database.url) });
      const killer = admin();
      await killer.connect();
      try {
        await victim.ping();
        const running = caught(sql`select pg_sleep(5)`.execute(victim.db));
        for (let i = 0; i < 50; i++) {
          const r = await killer.query(
            `select pg_terminate_backend(pid) as killed from pg_stat_activity where application_name = $1 and query like '%pg_sleep%' and pid <> pg_backend_pid()`,
            [appName],
          );
          if (r.rowCount !== null && r.rowCount > 0) break;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        const error = await running;
        expect((error as { code?: string }).code).toBe('57P01');
        expect(error).toBeInstanceOf(StorageUnavailableError);
        // The broken client leaves the pool once its socket closes (a moment after the
        // error): from then on queries get fresh connections, and nothing crashed.
        await new Promise((resolve) => setTimeout(resolve, 100));
        await victim.ping();
        await victim.ping();
      } finally {
        await killer.end();
        await victim.close();
      }
    });

    it('a query on a connection that already died is a StorageUnavailableError', async () => {
      const victim = openStorage({ databaseUrl: withAppName(fixture.database.url) });
      const killer = admin();
      await killer.connect();
      try {
        const error = await caught(
          victim.db.connection().execute(async (conn) => {
            await sql`select 1`.execute(conn);
            await killer.query(`select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1`, [appName]);
            await new Promise((resolve) => setTimeout(resolve, 100));
            await sql`select 1`.execute(conn);
          }),
        );
        expect(error).toBeInstanceOf(StorageUnavailableError);
      } finally {
        await killer.end();
        await victim.close();
      }
    });

    it('a refused connection is a StorageUnavailableError that names where it was refused, never the password', async () => {
      const down = openStorage({ databaseUrl: 'postgres://postgres:hunter2-secret@127.0.0.1:1/test', connectTimeoutMs: 500 });
      try {
        const error = await caught(down.ping());
        expect((error as { code?: string }).code).toBe('ECONNREFUSED');
        expect(error).toBeInstanceOf(StorageUnavailableError);
        // What `focus serve` prints when it cannot start: the operator sees which host and port.
        expect((error as Error).message).toBe('database unavailable (connect ECONNREFUSED 127.0.0.1:1)');
        expect((error as Error).message).not.toContain('hunter2');
      } finally {
        await down.close();
      }
    });

    it('waiting too long for a pooled connection is a StorageUnavailableError', async () => {
      const small = openStorage({ databaseUrl: withAppName(fixture.database.url), poolSize: 1, connectTimeoutMs: 200 });
      try {
        const holding = small.transaction((trx) => sql`select pg_sleep(0.6)`.execute(trx));
        await new Promise((resolve) => setTimeout(resolve, 50));
        const error = await caught(small.ping());
        expect(((error as Error).cause as Error).message).toMatch(/timeout exceeded when trying to connect/);
        expect(error).toBeInstanceOf(StorageUnavailableError);
        await holding;
      } finally {
        await small.close();
      }
    });

    it('a statement past the statement timeout is a StorageUnavailableError', async () => {
      const strict = openStorage({ databaseUrl: withAppName(fixture.database.url), statementTimeoutMs: 100 });
      try {
        const error = await caught(sql`select pg_sleep(2)`.execute(strict.db));
        expect((error as { code?: string }).code).toBe('57014');
        expect(error).toBeInstanceOf(StorageUnavailableError);
      } finally {
        await strict.close();
      }
    });

    it('too many connections for the role is a StorageUnavailableError', async () => {
      const role = `focus_limit_${process.pid}`;
      const a = admin();
      await a.connect();
      try {
        await a.query(`create role ${role} login connection limit 0`);
        const u = new URL(fixture.database.url);
        u.username = role;
        const limited = openStorage({ databaseUrl: u.toString(), connectTimeoutMs: 1_000 });
        try {
          const error = await caught(limited.ping());
          expect((error as { code?: string }).code).toBe('53300');
          expect(error).toBeInstanceOf(StorageUnavailableError);
        } finally {
          await limited.close();
        }
      } finally {
        await a.query(`drop role if exists ${role}`);
        await a.end();
      }
    });
  }
});

describe('PostgreSQL connection errors without a server', () => {
  it('a name with several addresses, all refused, names each attempt', async () => {
    // Node reports a connection to a name with several addresses, each refused, as an
    // AggregateError with an empty message. The name resolves here to two loopback
    // addresses with nothing listening on port 1, whatever this machine's resolver says.
    class TwoAddresses extends net.Socket {
      override connect(...args: unknown[]): this {
        const [port, host] = args as [number, string];
        return super.connect({
          port,
          host,
          autoSelectFamily: true,
          lookup: ((_name: string, options: { all?: boolean }, callback: (...a: unknown[]) => void) =>
            options.all === true
              ? callback(null, [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }])
              : callback(null, '127.0.0.1', 4)) as unknown as net.LookupFunction,
        });
      }
    }
    const client = new pg.Client({ host: 'db.example.test', port: 1, user: 'focus', password: 'hunter2-secret', stream: () => new TwoAddresses() });
    const error = await caught(client.connect());
    expect(error).toBeInstanceOf(AggregateError);
    expect((error as Error).message).toBe('');
    const translated = translatePostgresError(error);
    expect(translated).toBeInstanceOf(StorageUnavailableError);
    expect(translated?.message).toBe('database unavailable (ECONNREFUSED 127.0.0.1:1 ::1:1)');
    expect(translated?.message).not.toContain('hunter2');
  });
});
