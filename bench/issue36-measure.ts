/**
 * The pieces of `bench/issue36.ts`: processes, one load run, the CPU a set of processes
 * spent, and the listing statements of a call explained with ANALYZE on PostgreSQL.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CompiledQuery } from 'kysely';
import pg from 'pg';
import { StatementCapture } from '../test/helpers/statements.js';
import { runCannon } from './cannon.js';
import { freePort } from './free-port.js';
import { SERVE_NODE_FLAGS, type Storage } from './service-calls.js';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

export interface Server {
  child: ChildProcess;
  base: string;
}

async function healthy(base: string, child: ChildProcess, path: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      const res = await fetch(base + path);
      if (res.status < 500) return;
    } catch {
      /* not listening yet */
    }
    if (child.exitCode !== null) throw new Error(`${base} exited with ${child.exitCode}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${base} did not start`);
}

/** `focus serve` as a real process, as bench/run.ts starts it (no request logs, no rate limit). */
export async function startService(url: string): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, [...SERVE_NODE_FLAGS, join(ROOT, 'dist/cli/focus.js'), 'serve'], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: url, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT: '0' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  await healthy(base, child, '/healthz');
  return { child, base };
}

/** bench/plain-listing-server.js on a SQLite file. */
export async function startPlain(file: string): Promise<Server> {
  const child = spawn(process.execPath, [...SERVE_NODE_FLAGS, join(ROOT, 'bench/plain-listing-server.js'), file], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout?.once('data', (chunk: Buffer) => resolve((JSON.parse(chunk.toString().split('\n')[0] as string) as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`plain server exited with ${code}`)));
  });
  const base = `http://127.0.0.1:${port}`;
  await healthy(base, child, '/');
  return { child, base };
}

export async function stop(server: Server): Promise<void> {
  if (server.child.exitCode !== null) return;
  const exited = new Promise((r) => server.child.once('exit', r));
  server.child.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
  if (server.child.exitCode === null) server.child.kill('SIGKILL');
}

export interface Load {
  reqPerSec: number;
  p99: number;
  requests: number;
  non2xx: number;
  /** Bytes received per response, headers included. */
  bytes: number;
  /** CPU time of the server process (utime + stime) over the measured window, per response. */
  cpuMsPerRequest: number;
}

/**
 * Waits until the server answers a request promptly (three times running): autocannon stops at
 * its deadline, but the server still owes the requests in flight, which would land in the next window.
 */
async function drain(base: string): Promise<void> {
  let prompt = 0;
  for (const deadline = Date.now() + 20_000; prompt < 3 && Date.now() < deadline; ) {
    const t = performance.now();
    await fetch(`${base}/healthz`).catch(() => undefined);
    prompt = performance.now() - t < 50 ? prompt + 1 : 0;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Every path in turn for `seconds` s, once after a server starts: its start-up jobs, JIT and caches, before any window. */
export async function warmUp(server: Server, paths: string[], token: string, seconds: number): Promise<void> {
  const requests = paths.map((path) => ({ method: 'GET' as const, path, headers: { authorization: `Bearer ${token}` } }));
  await runCannon({ url: server.base, connections: 10, duration: seconds, requests });
  await drain(server.base);
}

/**
 * A warm-up of `warmup` s (not measured), then `seconds` s of GETs of `path` at `connections`;
 * `around` runs just before and just after the measured window.
 */
export async function load(server: Server, path: string, token: string, o: { connections: number; seconds: number; warmup: number; around?: () => Promise<void> }): Promise<Load> {
  const requests = [{ method: 'GET' as const, path, headers: { authorization: `Bearer ${token}` } }];
  await drain(server.base);
  await runCannon({ url: server.base, connections: o.connections, duration: o.warmup, requests });
  await drain(server.base);
  const pid = server.child.pid as number;
  const cpuBefore = cpuMs(pid);
  await o.around?.();
  const r = await runCannon({ url: server.base, connections: o.connections, duration: o.seconds, requests, timeout: 30 });
  await o.around?.();
  const requestsDone = Math.max(1, r.requests.total);
  return {
    reqPerSec: r.requests.average,
    p99: r.latency.p99,
    requests: r.requests.total,
    non2xx: r.non2xx + r.errors,
    bytes: Math.round(r.throughput.total / requestsDone),
    cpuMsPerRequest: (cpuMs(pid) - cpuBefore) / requestsDone,
  };
}

const CLOCK_TICKS_PER_SECOND = 100;

/** utime + stime of a process in ms (/proc/<pid>/stat fields 14 and 15); 0 once it is gone. */
export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/**
 * The PostgreSQL backends serving one application_name (the service's pool, named in its URL):
 * other work on the same server is not counted.
 */
export async function backendPids(admin: pg.Client, application: string): Promise<number[]> {
  const { rows } = await admin.query<{ pid: number }>('select pid from pg_stat_activity where application_name = $1', [application]);
  return rows.map((r) => r.pid);
}

/** CPU ms the given processes spent from now until the returned function is called (processes that appear meanwhile: all of theirs). */
export function cpuMeter(pids: () => Promise<number[]>): Promise<() => Promise<number>> {
  return pids().then((before) => {
    const start = new Map(before.map((pid) => [pid, cpuMs(pid)]));
    return async () => {
      let spent = 0;
      for (const pid of new Set([...before, ...(await pids())])) spent += cpuMs(pid) - (start.get(pid) ?? 0);
      return spent;
    };
  });
}

/** The statements a service call runs (captured), each run again under EXPLAIN (ANALYZE, BUFFERS) on PostgreSQL. */
export async function explainAnalyze(storage: Storage, call: (on: Storage) => Promise<unknown>): Promise<Explained[]> {
  const capture = new StatementCapture();
  const captured: Storage = { ...storage, db: storage.db.withPlugin(capture) };
  await call(captured);
  capture.reset();
  await call(captured);
  const out: Explained[] = [];
  for (const compiled of capture.compiled(storage.db)) {
    if (!/^\s*select/i.test(compiled.sql)) continue;
    const result = await storage.db.executeQuery<Record<string, string>>(CompiledQuery.raw(`explain (analyze, buffers) ${compiled.sql}`, [...compiled.parameters]));
    const plan = result.rows.map((r) => r['QUERY PLAN'] as string);
    const generic = await genericPlan(storage, compiled);
    out.push({ sql: compiled.sql, parameters: [...compiled.parameters], plan, ...planSummary(plan), generic: { plan: generic, ...planSummary(generic) } });
  }
  return out;
}

/** A value as an SQL literal, for EXECUTE's arguments (a list: an array literal). */
const literal = (v: unknown): string =>
  Array.isArray(v) ? `'{${v.map((e) => (typeof e === 'number' ? String(e) : `"${String(e)}"`)).join(',')}}'` : typeof v === 'number' ? String(v) : `'${String(v).replaceAll("'", "''")}'`;

/**
 * The statement's generic plan, the one PostgreSQL keeps for a named statement once it is
 * no dearer than planning anew (storage/postgres.named.ts): prepared and explained on one
 * connection with plan_cache_mode = force_generic_plan.
 */
async function genericPlan(storage: Storage, compiled: CompiledQuery): Promise<string[]> {
  return storage.db.connection().execute(async (c) => {
    await c.executeQuery(CompiledQuery.raw('set plan_cache_mode = force_generic_plan'));
    try {
      await c.executeQuery(CompiledQuery.raw(`prepare bench36_generic as ${compiled.sql}`));
      const result = await c.executeQuery<Record<string, string>>(CompiledQuery.raw(`explain (analyze, buffers) execute bench36_generic(${compiled.parameters.map(literal).join(', ')})`));
      return result.rows.map((r) => r['QUERY PLAN'] as string);
    } catch (error) {
      return [`(no generic plan: ${String(error)})`];
    } finally {
      await c.executeQuery(CompiledQuery.raw('deallocate all'));
      await c.executeQuery(CompiledQuery.raw('reset plan_cache_mode'));
    }
  });
}

export interface Explained {
  sql: string;
  parameters: unknown[];
  plan: string[];
  planningMs: number;
  executionMs: number;
  /** Shared buffers hit + read by the statement's top node. */
  buffers: number;
  /** The same under the generic plan a named statement may keep. */
  generic?: Pick<Explained, 'plan' | 'planningMs' | 'executionMs' | 'buffers'>;
}

function planSummary(plan: string[]): Pick<Explained, 'planningMs' | 'executionMs' | 'buffers'> {
  const ms = (label: string) => Number(plan.map((l) => new RegExp(`${label} Time: ([\\d.]+) ms`).exec(l)?.[1]).find((x) => x !== undefined) ?? Number.NaN);
  // The first Buffers line belongs to the top node: everything below it included.
  const top = plan.find((l) => /^\s*Buffers: shared/.test(l)) ?? '';
  const count = (kind: string) => Number(new RegExp(`${kind}=(\\d+)`).exec(top)?.[1] ?? 0);
  return { planningMs: ms('Planning'), executionMs: ms('Execution'), buffers: count('hit') + count('read') };
}

export { pg };
