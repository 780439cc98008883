/**
 * Webhooks under load (issue 16): `GET /tasks` while 1,000 events/s (at scale 1) are fanned
 * out and delivered to a local receiver, against the same `GET /tasks` with the same
 * writes and no webhooks. Called from run.ts; its own database, service process and
 * receiver. The events come from public-session updates that fan out to many webhooks
 * (USERS × 20), so that the writes stay a small, equal part of both sides.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { runCannon } from './cannon.js';
import { MAX_WEBHOOKS_PER_USER, SERVE_NODE_FLAGS, addMembers, migrateToLatest, openStorage } from './service-calls.js';

export interface WebhookBenchGoal {
  goal: string;
  ok: boolean | null;
  detail: string;
}

interface Options {
  root: string;
  url: string;
  scale: number;
  seconds: number;
  connections: number;
  log: (line: string) => void;
}

/** Events per second asked for at scale 1. */
const EVENTS_PER_SECOND = 1_000;
/** Session updates per second: each fans out to every webhook of every user. */
const UPDATES_PER_SECOND = 5;
const TASKS = 50;
/** A webhook receiver answering 204 and counting; `GET /count` tells how many it received. */
const RECEIVER = `
const server = require('node:http').createServer((req, res) => {
  if (req.url === '/count') return res.end(String(count));
  req.resume();
  req.on('end', () => { count++; res.writeHead(204).end(); });
});
let count = 0;
server.listen(0, '127.0.0.1', () => console.log('http://127.0.0.1:' + server.address().port));
`;
/** Alternations of the two sides; the medians are compared. */
const ROUNDS = 3;

async function json(base: string, method: string, path: string, token: string, body?: unknown): Promise<{ data: { id: string | number } }> {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { data: { id: string | number } };
}

async function startService(root: string, url: string): Promise<{ child: ChildProcess; base: string }> {
  // BENCH_CPU_PROF=1: a V8 CPU profile of the service in bench/results/tmp/prof/, as run.ts does.
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${join(root, 'bench/results/tmp/prof')}`] : [];
  const child = spawn(process.execPath, [...SERVE_NODE_FLAGS, ...profile, join(root, 'dist/cli/focus.js'), 'serve'], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: url, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', RATE_LIMIT: '0', WEBHOOK_ALLOW_PRIVATE: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // The last of what it logs, shown if it exits on its own.
  let text = '';
  let listening = false;
  child.stderr?.setEncoding('utf8');
  const base = await new Promise<string>((resolve, reject) => {
    child.stderr?.on('data', (chunk: string) => {
      text = (text + chunk).slice(-4_000);
      const match = listening ? null : /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(text);
      if (match?.[1] !== undefined) {
        listening = true;
        resolve(match[1]);
      }
    });
    child.once('exit', (code, signal) => {
      if (!listening) reject(new Error(`service exited with ${code}: ${text.slice(-2000)}`));
      else if (signal === null && code !== 0) process.stderr.write(`webhooks bench: the service exited with ${code}; its last words:\n${text}\n`);
    });
  });
  return { child, base };
}

export async function benchWebhooks(o: Options): Promise<WebhookBenchGoal[]> {
  const users = Math.max(1, Math.round((o.scale * EVENTS_PER_SECOND) / UPDATES_PER_SECOND / MAX_WEBHOOKS_PER_USER));
  const storage = openStorage(o.url);
  await migrateToLatest(storage);
  const tokens = await addMembers(
    storage,
    Array.from({ length: users }, (_, i) => `hooks${i}`),
    [1],
  );
  await storage.close();

  // The receiver is a process of its own: in this one it would take CPU from autocannon and bias the ratio.
  const receiver = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const receiverBase = await new Promise<string>((resolve) => receiver.stdout?.once('data', (chunk: Buffer) => resolve(chunk.toString().trim())));
  const hookUrl = `${receiverBase}/hook`;
  let received = 0;
  const poll = setInterval(() => {
    void fetch(`${receiverBase}/count`)
      .then(async (res) => (received = Number(await res.text())))
      .catch(() => undefined);
  }, 100);
  const service = await startService(o.root, o.url);
  try {
    const [reader = ''] = tokens;
    const session = await json(service.base, 'POST', '/api/v1/sessions', reader, {
      org_id: 1, name: 'Webhook bench', type: 'standard', duration: 60, schedule: '2026-12-10', time: '9:00 AM', is_public: true,
    });
    for (let i = 0; i < TASKS; i++) await json(service.base, 'POST', '/api/v1/tasks', reader, { context: `Task ${i}`, session_id: session.data.id });

    let writes = 0;
    /** The same session updates on both sides: UPDATES_PER_SECOND, each its own request. */
    const writer = () => {
      const timer = setInterval(() => {
        writes++;
        void json(service.base, 'PUT', `/api/v1/sessions/${session.data.id}`, reader, { name: `Webhook bench ${writes}` }).catch(() => undefined);
      }, 1000 / UPDATES_PER_SECOND);
      return () => clearInterval(timer);
    };
    const measure = async () => {
      const stopWriter = writer();
      const at = received;
      const started = Date.now();
      const result = await runCannon({ url: `${service.base}/api/v1/tasks?limit=${TASKS}`, connections: o.connections, duration: o.seconds, headers: { authorization: `Bearer ${reader}` } });
      stopWriter();
      return { reqPerSec: result.requests.average, p99: result.latency.p99, events: (received - at) / ((Date.now() - started) / 1000) };
    };

    await runCannon({ url: `${service.base}/api/v1/tasks?limit=${TASKS}`, connections: o.connections, duration: 2, headers: { authorization: `Bearer ${reader}` } });
    const hooks = users * MAX_WEBHOOKS_PER_USER;
    const subscribe = async () => {
      const ids: [string, string | number][] = [];
      for (const token of tokens) {
        for (let i = 0; i < MAX_WEBHOOKS_PER_USER; i++) ids.push([token, (await json(service.base, 'POST', '/api/v1/webhooks', token, { url: hookUrl, events: ['session.updated'] })).data.id]);
      }
      return async () => {
        for (const [token, id] of ids) await fetch(`${service.base}/api/v1/webhooks/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
      };
    };
    // The two sides alternate: the load of a shared machine moves by several × within a minute.
    const withoutRuns: Awaited<ReturnType<typeof measure>>[] = [];
    const withRuns: Awaited<ReturnType<typeof measure>>[] = [];
    let writesBefore = 0;
    let receivedBefore = 0;
    for (let round = 0; round < ROUNDS; round++) {
      withoutRuns.push(await measure());
      const unsubscribe = await subscribe();
      writesBefore = writes;
      receivedBefore = received;
      withRuns.push(await measure());
      if (round < ROUNDS - 1) {
        await new Promise((r) => setTimeout(r, 3_000));
        await unsubscribe();
      }
    }
    const mid = <T extends { reqPerSec: number }>(runs: T[]) => [...runs].sort((a, b) => a.reqPerSec - b.reqPerSec)[Math.floor(runs.length / 2)] as T;
    const without = mid(withoutRuns);
    const withHooks = mid(withRuns);
    // Sustained: what was enqueued in the last round is delivered shortly after, not left as a growing backlog.
    const expected = (writes - writesBefore) * hooks;
    const drainStart = Date.now();
    while (Date.now() < drainStart + 30_000 && received - receivedBefore < expected) await new Promise((r) => setTimeout(r, 100));
    const drainSeconds = (Date.now() - drainStart) / 1000;
    const ratio = withHooks.reqPerSec / without.reqPerSec;
    o.log('');
    o.log(`webhooks: ${users} users × ${MAX_WEBHOOKS_PER_USER} webhooks = ${hooks}, ${UPDATES_PER_SECOND} session updates/s → ${hooks * UPDATES_PER_SECOND} events/s asked`);
    for (let i = 0; i < ROUNDS; i++) {
      const [a, b] = [withoutRuns[i], withRuns[i]];
      if (a === undefined || b === undefined) continue;
      o.log(`  round ${i + 1}: GET /tasks (${TASKS}) ${a.reqPerSec.toFixed(0)} req/s (p99 ${a.p99} ms) without webhooks → ${b.reqPerSec.toFixed(0)} req/s (p99 ${b.p99} ms) with ${b.events.toFixed(0)} events/s delivered meanwhile`);
    }
    o.log(`  medians: ${without.reqPerSec.toFixed(0)} → ${withHooks.reqPerSec.toFixed(0)} req/s = ${ratio.toFixed(2)}×`);
    o.log(`  ${expected.toLocaleString('en-US')} events enqueued while measured; all but ${Math.max(0, expected - (received - receivedBefore)).toLocaleString('en-US')} delivered ${drainSeconds.toFixed(1)} s after the load stopped`);
    // What the updates ask for (1,000/s at scale 1; the users are rounded to whole ones).
    const target = hooks * UPDATES_PER_SECOND;
    const backlog = Math.max(0, expected - (received - receivedBefore));
    return [
      {
        goal: `webhooks: ${target.toFixed(0)} events/s delivered to a local receiver, sustained`,
        ok: withHooks.events >= 0.9 * target && backlog === 0 && drainSeconds < 5,
        detail: `${withHooks.events.toFixed(0)} events/s over ${o.seconds} s (the updates asked for made ${(expected / o.seconds).toFixed(0)}/s); backlog ${backlog} after ${drainSeconds.toFixed(1)} s`,
      },
      { goal: 'webhooks: GET /tasks within 10 % of its speed without webhooks', ok: ratio >= 0.9, detail: `${withHooks.reqPerSec.toFixed(0)} vs ${without.reqPerSec.toFixed(0)} req/s = ${ratio.toFixed(2)}×` },
    ];
  } finally {
    service.child.kill('SIGTERM');
    await new Promise((r) => service.child.once('exit', r));
    clearInterval(poll);
    receiver.kill('SIGTERM');
  }
}
