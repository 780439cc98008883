/**
 * In-process A/B of the storage machinery (issue 35, item 5), alternating on and off in one
 * process so that a loaded machine moves both alike. Reads: server CPU per request
 * (process.cpuUsage) through inject(), one app per variant on one SQLite file.
 * Writes: daily-series POSTs on a database file per variant, alternated in batches;
 * wall time per POST, CPU per POST, the worst event-loop delay, and the log's peak pages.
 *
 *   npx tsx bench/machinery-ab.ts reads|writes
 *
 * Variants: everything on; statements built every time (a no-op Kysely plugin, which makes
 * every prepared query build: a plugin's own cost, about a microsecond, counts against it);
 * and SQLite's machinery off (StorageSettings.sqliteMachinery = false: no checkpointer, no
 * write room, better-sqlite3's row objects). The results of issue 35 in bench/results/machinery/
 * came from an earlier switch that also took the rows, the checkpointer and the room apart.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { KyselyPlugin } from 'kysely';
import { buildApp } from '../src/app/app.js';
import { createAuthService } from '../src/features/auth/auth.service.js';
import { openStorage } from '../src/storage/database.js';
import { walIndexReader } from '../src/storage/sqlite/sqlite.wal-index.js';
import { plannerBody } from './seed.js';
import { createTestApp, createTestDatabase, testConfig } from '../test/helpers/harness.js';

const mode = process.argv[2] ?? 'reads';
const ROUNDS = Number(process.env.ROUNDS ?? 6);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const spread = (xs: number[]) => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`;

const NO_OP: KyselyPlugin = { transformQuery: (a) => a.node, transformResult: (a) => Promise.resolve(a.result) };

async function appOn(url: string, variant: string) {
  const storage = openStorage({ databaseUrl: url, sqliteMachinery: variant !== 'machinery' }, { plugins: variant === 'prepared' ? [NO_OP] : [] });
  const app = await buildApp({ config: testConfig(url), storage, logger: false });
  await app.ready();
  return { app, storage };
}

async function reads() {
  const t = await createTestApp('sqlite');
  const alice = await t.user('alice', [1, 2]);
  const bob = await t.user('bob', [1, 2]);
  for (let i = 0; i < 400; i++) {
    const mine = i % 2 === 0 ? alice : bob;
    const res = await mine.post<{ data: { id: number } }>('/api/v1/sessions', { ...plannerBody(1 + (i % 2), i % 60, i % 20 === 0), is_public: i % 3 !== 0 });
    if (res.status !== 201) throw new Error(res.text.slice(0, 300));
    if (i < 50) await alice.post('/api/v1/tasks', { session_id: res.body.data.id, context: `task ${i}` });
  }
  await t.storage.refreshStatistics();
  // Variant apps on the same file.
  const apps = { on: { app: t.app }, prepared: await appOn(t.url, 'prepared'), machinery: await appOn(t.url, 'machinery') };
  const urls = ['/api/v1/tasks', '/api/v1/sessions', '/api/v1/sessions?keyword=booked', '/api/v1/sessions?date=2026-01-20', '/api/v1/sessions?day_start=2026-01-01&day_ends=2026-01-31'];
  const headers = { authorization: `Bearer ${alice.token}` };
  const cpu: Record<string, Record<string, number[]>> = {};
  const N = 150;
  for (let round = 0; round < ROUNDS; round++) {
    for (const url of urls) {
      for (const [name, v] of Object.entries(apps)) {
        for (let i = 0; i < 20; i++) await v.app.inject({ method: 'GET', url, headers });
        const before = process.cpuUsage();
        for (let i = 0; i < N; i++) {
          const res = await v.app.inject({ method: 'GET', url, headers });
          if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode}`);
        }
        const used = process.cpuUsage(before);
        ((cpu[url] ??= {})[name] ??= []).push((used.user + used.system) / N);
      }
    }
  }
  console.log(`reads: server CPU µs per request, median (spread) of ${ROUNDS} alternated rounds of ${N}; off/on ratio of medians`);
  for (const url of urls) {
    const row = cpu[url] ?? {};
    const on = median(row.on ?? []);
    console.log(`${url}\n  ${Object.entries(row).map(([k, xs]) => `${k === 'on' ? 'all on' : `${k} off`}: ${median(xs).toFixed(0)} (${spread(xs)})${k === 'on' ? '' : ` = ${(median(xs) / on).toFixed(2)}×`}`).join('; ')}`);
  }
  for (const v of [apps.prepared, apps.machinery]) {
    await v.app.close();
    await v.storage.close();
  }
  await t.close();
}

async function writes() {
  const envs = await Promise.all(
    ['', 'machinery'].map(async (off) => {
      const db = await createTestDatabase('sqlite');
      const migrating = openStorage({ databaseUrl: db.url });
      await migrating.migrate();
      await migrating.close();
      const { app, storage } = await appOn(db.url, off);
      const auth = createAuthService(storage);
      await auth.addUser('writer', [1]);
      const token = (await auth.issueToken('writer')).token;
      return { off, app, storage, db, token, wal: walIndexReader(db.url.slice('sqlite:'.length)) };
    }),
  );
  const stats: Record<string, { ms: number[]; cpu: number[]; loop: number[]; peak: number[] }> = {};
  const BATCH = Number(process.env.BATCH ?? 12);
  const CONCURRENT = Number(process.env.CONCURRENT ?? 4);
  for (let round = 0; round < ROUNDS; round++) {
    for (const e of envs) {
      const loop = monitorEventLoopDelay({ resolution: 5 });
      let peak = 0;
      const sampler = setInterval(() => (peak = Math.max(peak, e.wal.read()?.pages ?? 0)), 5);
      loop.enable();
      const started = performance.now();
      const before = process.cpuUsage();
      let n = 0;
      let writing = true;
      // Readers alongside (READERS): their snapshots keep the checkpointer from copying the whole log.
      const readers = Array.from({ length: Number(process.env.READERS ?? 0) }, async () => {
        while (writing) await e.app.inject({ method: 'GET', url: '/api/v1/sessions?date=2026-01-20', headers: { authorization: `Bearer ${e.token}` } });
      });
      await Promise.all(
        Array.from({ length: CONCURRENT }, async () => {
          for (let i = 0; i < BATCH / CONCURRENT; i++) {
            const res = await e.app.inject({
              method: 'POST',
              url: '/api/v1/sessions',
              headers: { authorization: `Bearer ${e.token}`, 'content-type': 'application/json' },
              payload: plannerBody(1, n++, true),
            });
            if (res.statusCode !== 201) throw new Error(res.body.slice(0, 300));
          }
        }),
      );
      writing = false;
      await Promise.all(readers);
      const used = process.cpuUsage(before);
      loop.disable();
      clearInterval(sampler);
      const s = (stats[e.off || 'on'] ??= { ms: [], cpu: [], loop: [], peak: [] });
      s.ms.push((performance.now() - started) / BATCH);
      s.cpu.push((used.user + used.system) / 1000 / BATCH);
      s.loop.push(loop.max / 1e6);
      s.peak.push(peak);
    }
  }
  console.log(`writes: daily-series POST (no end), ${CONCURRENT} at once, batches of ${BATCH}, ${ROUNDS} alternated rounds: median (spread)`);
  for (const [k, s] of Object.entries(stats)) {
    console.log(`  ${k === 'on' ? 'all on' : `${k} off`}: wall ${median(s.ms).toFixed(1)} ms/POST (${spread(s.ms)}), CPU ${median(s.cpu).toFixed(1)} ms/POST (${spread(s.cpu)}), loop max ${median(s.loop).toFixed(0)} ms (${spread(s.loop)}), log peak ${median(s.peak)} pages (${spread(s.peak)})`);
  }
  for (const e of envs) {
    e.wal.close();
    await e.app.close();
    await e.storage.close();
    await e.db.drop();
  }
}

await (mode === 'writes' ? writes() : reads());
