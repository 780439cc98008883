/**
 * The live-client goals of issue 15, called from run.ts on the seeded database:
 *
 * - `/changes` polling: N clients with up-to-date cursors cost less than 0.2× of as many
 *   `GET /tasks` (the cost of a request: 1 / req/s at saturation, same connections).
 * - N open event streams on one instance: under 200 MB of extra RSS, no event-loop stall
 *   over 50 ms while changes are pushed to all of them.
 *
 * A service process of its own (with bench/probe.js), so that its memory is the streams'.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCannon } from './cannon.js';
import { freePort } from './free-port.js';
import { SERVE_NODE_FLAGS, addMembers, openStorage } from './service-calls.js';

export interface LiveUser {
  handle: string;
  token: string;
}

export interface LiveOptions {
  root: string;
  databaseUrl: string;
  /** Reads: owns tasks (the seed's reader). */
  reader: LiveUser;
  /** Creates sessions in an org every stream's user sees (public). */
  writer: LiveUser;
  /** Org the writer's sessions go in; every token's user must be a member. */
  orgId: number;
  /** Tokens to spread the streams over (at most 1,000 streams each). */
  tokens: readonly LiveUser[];
  clients: number;
  durationSeconds: number;
  log: (line: string) => void;
}

export interface LiveGoal {
  goal: string;
  ok: boolean | null;
  detail: string;
}

const rssMb = (pid: number) => {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  } catch {
    return Number.NaN;
  }
};

async function startService(o: LiveOptions, env: Record<string, string>): Promise<{ child: ChildProcess; base: string; probeFile: string }> {
  const port = await freePort();
  const probeFile = join(tmpdir(), `focus-bench-live-probe-${process.pid}.json`);
  const child = spawn(process.execPath, [...SERVE_NODE_FLAGS, '--import', join(o.root, 'bench/probe.js'), join(o.root, 'dist/cli/focus.js'), 'serve'], {
    cwd: o.root,
    env: { ...process.env, DATABASE_URL: o.databaseUrl, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT: '0', BENCH_PROBE_FILE: probeFile, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // Read, so that a full pipe never blocks the service; what it logs (warn and up) is shown at the end.
  let logged = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => (logged = (logged + chunk).slice(-4_000)));
  child.once('exit', () => {
    if (logged !== '') o.log(`  (the service logged: ${logged.slice(0, 600)})`);
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) return { child, base, probeFile };
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('live bench: service did not become healthy');
}

async function stop(child: ChildProcess) {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 12_000))]);
  if (child.exitCode === null) child.kill('SIGKILL');
}

async function loopDelay(child: ChildProcess, probeFile: string): Promise<{ max: number; p99: number }> {
  rmSync(probeFile, { force: true });
  child.kill('SIGUSR2');
  for (let i = 0; i < 500 && !existsSync(probeFile); i++) await new Promise((r) => setTimeout(r, 20));
  try {
    return JSON.parse(readFileSync(probeFile, 'utf8')) as { max: number; p99: number };
  } catch {
    return { max: Number.NaN, p99: Number.NaN };
  }
}

const auth = (token: string) => ({ authorization: `Bearer ${token}` });

/** A cursor that is up to date: a full sync, then the log until it is empty. */
async function upToDateCursor(base: string, token: string): Promise<string> {
  let cursor = '';
  for (let i = 0; i < 10_000; i++) {
    const res = await fetch(`${base}/api/v1/changes?limit=500${cursor === '' ? '' : `&cursor=${cursor}`}`, { headers: auth(token) });
    const page = (await res.json()) as { data: unknown[]; next_cursor: string };
    const syncing = (JSON.parse(Buffer.from(page.next_cursor, 'base64url').toString()) as unknown[])[1] !== 2;
    cursor = page.next_cursor;
    if (!syncing && page.data.length === 0) return cursor;
  }
  throw new Error('live bench: the change feed did not end');
}

/**
 * `n` members of the writer's org with a token each: a team whose every member has a stream
 * open costs the hub per user, where a few users' many streams share one read.
 */
async function distinctUsers(o: LiveOptions, n: number): Promise<LiveUser[]> {
  const storage = openStorage(o.databaseUrl);
  try {
    const handles = Array.from({ length: n }, (_, i) => `live${i}`);
    const tokens = await addMembers(storage, handles, [o.orgId]);
    return handles.map((handle, i) => ({ handle, token: tokens[i] as string }));
  } finally {
    await storage.close();
  }
}

/** The goals; logs what it measures. */
export async function benchLive(o: LiveOptions): Promise<LiveGoal[]> {
  const perToken = Math.min(1_000, Math.ceil(o.clients / Math.max(1, o.tokens.length)));
  const env = { EVENTS_STREAMS_PER_TOKEN: String(perToken), EVENTS_MAX_STREAMS: String(o.clients + 100) };
  let service = await startService(o, env);
  const goals: LiveGoal[] = [];
  try {
    o.log('');
    o.log(`live clients (issue 15), ${o.clients} clients, a service process of its own:`);

    // Polling.
    const cursor = await upToDateCursor(service.base, o.reader.token);
    const measure = async (path: string) => {
      const opts = { url: service.base + path, connections: o.clients, headers: auth(o.reader.token) };
      await runCannon({ ...opts, duration: Math.min(3, o.durationSeconds) });
      return runCannon({ ...opts, duration: o.durationSeconds });
    };
    const tasks = await measure('/api/v1/tasks');
    const changes = await measure(`/api/v1/changes?cursor=${cursor}`);
    const ratio = tasks.requests.average / changes.requests.average;
    o.log(`  GET /tasks: ${tasks.requests.average.toFixed(0)} req/s, p99 ${tasks.latency.p99} ms, non-2xx ${tasks.non2xx}`);
    o.log(`  GET /changes (up to date): ${changes.requests.average.toFixed(0)} req/s, p99 ${changes.latency.p99} ms, non-2xx ${changes.non2xx}, errors ${changes.errors}, timeouts ${changes.timeouts}`);
    goals.push({
      goal: `/changes polling by ${o.clients} clients costs < 0.2× of as many GET /tasks`,
      ok: changes.non2xx === 0 && ratio < 0.2,
      detail: `${ratio.toFixed(2)}× (cost = 1 / req/s: ${changes.requests.average.toFixed(0)} vs ${tasks.requests.average.toFixed(0)} req/s)`,
    });

    // Streams, on a fresh process each time: its memory before is that of an idle service.
    for (const round of [
      { tokens: o.tokens, label: `${o.clients} streams of ${o.tokens.length} users` },
      { tokens: await distinctUsers(o, o.clients), label: `${o.clients} streams of as many users` },
    ]) {
      await stop(service.child);
      service = await startService(o, env);
      goals.push(await streamsRound(o, service, round.tokens, round.label));
    }
  } finally {
    await stop(service.child);
  }
  return goals;
}

/**
 * `o.clients` streams over `tokens` (round robin), on a fresh service: memory, event-loop
 * delay and delivery while changes every stream's user sees are pushed to all of them.
 */
async function streamsRound(o: LiveOptions, service: { child: ChildProcess; base: string; probeFile: string }, tokens: readonly LiveUser[], label: string): Promise<LiveGoal> {
  await new Promise((r) => setTimeout(r, 1_000));
  const before = rssMb(service.child.pid as number);
  await loopDelay(service.child, service.probeFile);
  let received = 0;
  const sockets: { destroy(): void }[] = [];
  // Per stream: the change ids it received, and whether the server ended it.
  const perStream = Array.from({ length: o.clients }, (_, i) => ({ user: i % tokens.length, ids: [] as string[], ended: '' }));
  await Promise.all(
    Array.from({ length: o.clients }, (_, i) =>
      new Promise<void>((resolve, reject) => {
        const token = (tokens[i % tokens.length] as LiveUser).token;
        const mine = perStream[i] as (typeof perStream)[number];
        // agent: false: Node's global agent times out a socket idle for 5 s, as a stream is between events.
        const req = request(`${service.base}/api/v1/events`, { agent: false, headers: { ...auth(token), accept: 'text/event-stream' } }, (res) => {
          if (res.statusCode !== 200) reject(new Error(`stream ${i}: ${res.statusCode}`));
          res.setEncoding('utf8');
          let buffer = '';
          res.on('data', (chunk: string) => {
            buffer += chunk;
            const blocks = buffer.split('\n\n');
            buffer = blocks.pop() ?? '';
            for (const b of blocks) {
              if (!b.startsWith('event: change')) continue;
              received++;
              const data = b.split('\n').find((l) => l.startsWith('data: '));
              mine.ids.push(data === undefined ? '?' : String((JSON.parse(data.slice(6)) as { id: string }).id));
            }
          });
          // Before the bench destroys the sockets: the server ended the stream (or the connection broke).
          res.on('close', () => (mine.ended ||= 'closed'));
          resolve();
        });
        req.on('error', reject);
        sockets.push(req);
        req.end();
      }),
    ),
  );
  const opened = rssMb(service.child.pid as number);
  // Stalls are measured with the streams open: from here (the burst of 1,000 connections opening at once is not "open streams").
  await new Promise((r) => setTimeout(r, 1_000));
  await loopDelay(service.child, service.probeFile);
  // Changes every stream's user sees, pushed to all of them.
  const attempts = 20;
  let writes = 0;
  const failures: number[] = [];
  const written: string[] = [];
  for (let i = 0; i < attempts; i++) {
    const res = await fetch(`${service.base}/api/v1/sessions`, {
      method: 'POST',
      headers: { ...auth(o.writer.token), 'content-type': 'application/json' },
      body: JSON.stringify({ org_id: o.orgId, name: `live bench ${i}`, type: 'standard', duration: 30, schedule: '2026-06-01', time: '9:00 AM', is_public: true }),
    });
    const body = await res.text();
    if (res.status === 201) {
      writes++;
      written.push(String((JSON.parse(body) as { data: { id: number } }).data.id));
    } else failures.push(res.status);
    await new Promise((r) => setTimeout(r, 100));
  }
  if (failures.length > 0) o.log(`  (writes refused: ${failures.join(', ')})`);
  const pushed = Date.now();
  for (let i = 0; i < 100 && received < writes * o.clients; i++) await new Promise((r) => setTimeout(r, 100));
  const lag = Date.now() - pushed;
  const peak = Math.max(opened, rssMb(service.child.pid as number));
  const delay = await loopDelay(service.child, service.probeFile);
  // Whole streams missing (ended by the server, or never sent to) or particular changes missing: they have different causes.
  const count = (f: (s: (typeof perStream)[number]) => boolean) => perStream.filter(f).length;
  const perChange = written.length === 0 ? [0] : written.map((id) => count((s) => s.ids.includes(id)));
  const duplicated = count((s) => new Set(s.ids).size < s.ids.length);
  o.log(
    `  per stream: ${count((s) => s.ids.length === writes)} received every change, ${count((s) => s.ids.length > 0 && s.ids.length < writes)} some, ${count((s) => s.ids.length === 0)} none, ${duplicated} some twice; ` +
      `${count((s) => s.ended !== '')} ended by the server (${[...new Set(perStream.filter((s) => s.ended !== '').map((s) => tokens[s.user]?.handle))].join(', ') || 'none'}); ` +
      `each change reached ${Math.min(...perChange)}–${Math.max(...perChange)} streams`,
  );
  for (const s of sockets) s.destroy();
  const extra = peak - before;
  o.log(`  ${label}: RSS ${before.toFixed(0)} → ${opened.toFixed(0)} MB open, ${peak.toFixed(0)} MB after ${writes} changes pushed; ${received} change events received (expected ${writes * o.clients}), the last ${lag} ms after the last change; loop delay max ${delay.max} ms, p99 ${delay.p99} ms`);
  return {
    goal: `${label} on one instance: < 200 MB extra RSS, no event-loop stall > 50 ms`,
    ok: extra < 200 && delay.max <= 50 && received === writes * o.clients,
    detail: `+${extra.toFixed(0)} MB, loop max ${delay.max} ms, ${received}/${writes * o.clients} events delivered, the last ${lag} ms after the last change`,
  };
}
