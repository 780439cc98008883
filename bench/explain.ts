/**
 * Query plans of the statements the service really issues: the service functions
 * run in-process against a Storage whose Kysely carries a capturing plugin, and
 * every captured statement is compiled and EXPLAINed on the same database.
 */
import { CompiledQuery } from 'kysely';
import { StatementCapture } from '../test/helpers/statements.js';
import type { Storage } from './service-calls.js';

export interface Plan {
  sql: string;
  plan: string[];
  /** A big table read without an index (SQLite `SCAN t` without USING, PostgreSQL `Seq Scan`). */
  fullScan: string[];
}

/** Tables that grow with the data; a scan of a tiny table (orgs) is the right plan. */
const BIG_TABLES = ['sessions', 'tasks', 'session_participants', 'session_collaborators', 'session_exceptions', 'tokens', 'memberships', 'users'];
const ALIASES: Record<string, string> = { s: 'sessions', u: 'users', sp: 'session_participants', sc: 'session_collaborators' };

/**
 * SQLite: `SCAN t` reads the whole table (or, `USING COVERING INDEX`, a whole index) —
 * flagged for a growing table. PostgreSQL estimates rows, so a Seq Scan is flagged
 * only where it expects ≥ 1,000 rows (the planner rightly scans small tables).
 */
function fullScansIn(lines: string[]): string[] {
  return lines.filter((line) => {
    const sqlite = /^\s*SCAN (\w+)/.exec(line);
    if (sqlite?.[1] !== undefined) return BIG_TABLES.includes(ALIASES[sqlite[1]] ?? sqlite[1]);
    const pg = /Seq Scan on (\w+).*rows=(\d+)/.exec(line);
    return pg?.[1] !== undefined && BIG_TABLES.includes(pg[1]) && Number(pg[2]) >= 1_000;
  });
}

/** Runs fn against a capturing Storage and returns the plan of each statement it issued. */
export async function explainCalls(storage: Storage, fn: (captured: Storage) => Promise<unknown>): Promise<Plan[]> {
  const capture = new StatementCapture();
  const captured: Storage = { ...storage, db: storage.db.withPlugin(capture) };
  await fn(captured);
  const plans: Plan[] = [];
  for (const compiled of capture.compiled(storage.db)) {
    if (!/^\s*select/i.test(compiled.sql)) continue; // writes (token touch) are by primary key
    const prefix = storage.engine === 'sqlite' ? 'explain query plan ' : 'explain ';
    const result = await storage.db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(prefix + compiled.sql, [...compiled.parameters]));
    const plan = result.rows.map((r) => (typeof r.detail === 'string' ? r.detail : typeof r['QUERY PLAN'] === 'string' ? r['QUERY PLAN'] : JSON.stringify(r)));
    plans.push({ sql: compiled.sql, plan, fullScan: fullScansIn(plan) });
  }
  return plans;
}

/** What a call's statements cost by themselves (see statementCost). */
export interface StatementCost {
  statements: number;
  /** Milliseconds for all of them, one after another. */
  ms: number;
}

/**
 * The statements a call executes, run again one after another through the service's own
 * storage driver for about `budgetMs`: what a request costs in the database and driver
 * alone, without building queries, rendering records or HTTP. On SQLite, where statements
 * run on the event loop, 1000 / ms is a ceiling on a single instance's requests per second.
 */
export async function statementCost(storage: Storage, fn: (captured: Storage) => Promise<unknown>, budgetMs = 1_000): Promise<StatementCost> {
  const capture = new StatementCapture();
  const captured: Storage = { ...storage, db: storage.db.withPlugin(capture) };
  // The second call is the one measured: what a service remembers between requests (a
  // common keyword's verdict) it remembers here too.
  await fn(captured);
  capture.reset();
  await fn(captured);
  // Writes (the token touch, once a minute) are left out, as in the plans.
  const queries = capture
    .compiled(storage.db)
    .filter((c) => /^\s*select/i.test(c.sql))
    .map((c) => CompiledQuery.raw(c.sql, [...c.parameters]));
  const runAll = async () => {
    for (const query of queries) await storage.db.executeQuery(query);
  };
  // Warm-up: statement cache, page cache, JIT.
  for (let i = 0; i < 20; i++) await runAll();
  let runs = 0;
  const started = performance.now();
  while (runs < 20 || performance.now() - started < budgetMs) {
    await runAll();
    runs++;
  }
  return { statements: queries.length, ms: (performance.now() - started) / runs };
}
