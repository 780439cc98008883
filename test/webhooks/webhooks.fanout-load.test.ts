import { Worker } from 'node:worker_threads';
import { afterEach, beforeAll, expect, it } from 'vitest';
import { createAuthService } from '../../src/features/auth/auth.service.js';
import { openStorage } from '../../src/storage/database.js';
import { type TestDatabase, createTestDatabase, describeEachDialect } from '../helpers/harness.js';
import { http } from '../helpers/http.js';
import { type ServerProcess, buildOnce, startServer } from '../helpers/server-process.js';

/*
 * Contract section 13, fan-out: announcing one change to many subscribers does not hold
 * the event loop. 300 webhook subscribers of a session of about 18 KB, edited 10 times a second,
 * while a user of another org measures how long their own requests take (a real
 * `focus serve` process) until every delivery went out.
 */

beforeAll(buildOnce, 180_000);

const SUBSCRIBERS = 300;
const PUTS = 60;
const PUTS_PER_SECOND = 10;

/**
 * A receiver answering 200 on a thread of its own: 18,000 deliveries handled on the test's
 * event loop would delay the measuring client's own requests, and be counted as the server's.
 */
const RECEIVER = `
const http = require('node:http');
const { parentPort } = require('node:worker_threads');
let received = 0;
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => { received++; res.writeHead(200).end('ok'); });
});
server.keepAliveTimeout = 1000;
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
parentPort.on('message', (m) => {
  if (m === 'count') parentPort.postMessage({ received });
  if (m === 'stop') { server.closeAllConnections(); server.close(() => process.exit(0)); }
});
`;

class ThreadReceiver {
  private readonly worker = new Worker(RECEIVER, { eval: true });
  url = '';
  async start(): Promise<this> {
    const { port } = await new Promise<{ port: number }>((resolve) => this.worker.once('message', resolve));
    this.url = `http://127.0.0.1:${port}/hook`;
    return this;
  }
  count(): Promise<number> {
    const answer = new Promise<{ received: number }>((resolve) => this.worker.once('message', resolve));
    this.worker.postMessage('count');
    return answer.then((a) => a.received);
  }
  async until(n: number, timeoutMs: number): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (let got = await this.count(); ; got = await this.count()) {
      if (got >= n) return got;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${n} deliveries; received ${got}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  async stop(): Promise<void> {
    this.worker.postMessage('stop');
    await new Promise((resolve) => this.worker.once('exit', resolve));
  }
}

describeEachDialect('webhooks: fan-out to many subscribers', (dialect) => {
  let database: TestDatabase | undefined;
  let server: ServerProcess | undefined;
  let receiver: ThreadReceiver | undefined;
  afterEach(async () => {
    await server?.stop();
    await receiver?.stop();
    await database?.drop();
  });

  it(`keeps another org's requests under 100 ms while a large session goes to ${SUBSCRIBERS} webhooks 10 times a second`, async () => {
    database = await createTestDatabase(dialect);
    server = await startServer({ DATABASE_URL: database.url, RATE_LIMIT: '0', WEBHOOK_ALLOW_PRIVATE: '1' });
    const storage = openStorage({ databaseUrl: database.url });
    const auth = createAuthService(storage);
    await auth.addUser('owner', [1]);
    await auth.addUser('other', [2]);
    const owner = (await auth.issueToken('owner')).token;
    const other = (await auth.issueToken('other')).token;
    const subscribers: string[] = [];
    for (let i = 0; i < SUBSCRIBERS; i++) {
      await auth.addUser(`sub${i}`, [1]);
      subscribers.push((await auth.issueToken(`sub${i}`)).token);
    }
    await storage.close();
    receiver = await new ThreadReceiver().start();
    for (const token of subscribers) {
      const res = await http(server.url, 'POST', '/api/v1/webhooks', token, { url: receiver.url, events: ['session.updated'] });
      expect(res.status).toBe(201);
    }
    // As large as a session gets: 12 KiB of blocked addresses and 50 long app names, about 18 KB.
    const urls = Array.from({ length: 195 }, (_, i) => `https://blocked-site-number-${i}.example.com/some/long/path`);
    const apps = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`${'Notification app with a long name '.repeat(2)}${i}`, true]));
    const created = await http(server.url, 'POST', '/api/v1/sessions', owner, {
      org_id: 1,
      name: 'All hands',
      type: 'standard',
      duration: 60,
      schedule: '2026-12-10',
      time: '9:00 AM',
      is_public: true,
      website_blocker_enabled: true,
      website_blocker: { mode: 'custom', category: ['social'], urls },
      snooze_enabled: true,
      snooze_apps: apps,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = (created.body as { data: { id: number } }).data.id;
    expect(JSON.stringify(created.body).length).toBeGreaterThan(15_000);

    let attacking = true;
    const latencies: number[] = [];
    const statuses = new Set<number>();
    const url = server.url;
    const measure = (async () => {
      while (attacking) {
        const started = performance.now();
        const res = await http(url, 'GET', '/api/v1/tasks', other);
        latencies.push(performance.now() - started);
        statuses.add(res.status);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const start = Date.now();
    let delivered: number | undefined;
    try {
      const puts: Promise<{ status: number }>[] = [];
      for (let i = 0; i < PUTS; i++) {
        // On schedule, whatever each PUT takes.
        const due = start + (i * 1000) / PUTS_PER_SECOND;
        await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
        puts.push(http(server.url, 'PUT', `/api/v1/sessions/${id}`, owner, { name: `All hands ${i}` }));
      }
      // Every edit is taken: the owner's writes are not starved by the deliveries' bookkeeping either.
      expect((await Promise.all(puts)).map((r) => r.status)).toEqual(puts.map(() => 200));
      // The fan-out and the deliveries go on after the last PUT: measure until they are done.
      delivered = await receiver.until(SUBSCRIBERS * PUTS, 180_000);
      await new Promise((r) => setTimeout(r, 2_000));
    } finally {
      attacking = false;
      await measure;
    }
    expect([...statuses]).toEqual([200]);
    const sorted = [...latencies].sort((a, b) => a - b);
    const p95 = sorted[Math.floor(sorted.length * 0.95)] ?? Infinity;
    console.info(`[${dialect}] ${sorted.length} requests, p50 ${Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0)} ms, p95 ${Math.round(p95)} ms, max ${Math.round(sorted.at(-1) ?? 0)} ms; ${delivered} deliveries, ${Math.round((Date.now() - start) / 1000)} s`);
    expect(sorted.length).toBeGreaterThan(20);
    expect(p95, `p95 of ${sorted.length} requests: ${Math.round(p95)} ms, max ${Math.round(sorted.at(-1) ?? 0)} ms`).toBeLessThan(100);
  }, 400_000);
});
