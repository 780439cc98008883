/**
 * `npm run bench:listings [-- --seconds 3 --warmup 1 --connections 50 --out bench/results/issue-36/latest]`
 * (`--only postgres|sqlite` and `--shapes date,keyword`, a name's start, narrow a run while working on one part;
 * `--pairs N`, alternated Focus/plain runs per SQLite shape, 3 by default)
 *
 * Issue 36's measurement. SQLite: each listing shape against a plain server doing the same page
 * (bench/plain-listing-server.js, on a copy of the same database), alternated shape by shape in
 * one run, after checking that both serve the same page. PostgreSQL (when DATABASE_URL or
 * TEST_DATABASE_URL is a postgres:// URL): the same shapes and `GET /tasks` (50), with the CPU
 * the database's backends spent per request, and EXPLAIN (ANALYZE, BUFFERS) of each shape's
 * statements. Both databases are seeded by bench/seed.ts at SCALE: 8,000 sessions in the reader's
 * two orgs (the same sessions a reader sees at scale 1, with nothing else around them).
 */
import { copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { type Explained, type Load, ROOT, type Server, backendPids, cpuMeter, cpuMs, explainAnalyze, load, pg, startPlain, startService, stop, warmUp } from './issue36-measure.js';
import { explainText, goals, report } from './issue36-report.js';
import { type SeedResult, seed } from './seed.js';
import { migrateToLatest, openStorage, prepareCall } from './service-calls.js';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '1' },
    connections: { type: 'string', default: '50' },
    out: { type: 'string', default: join(ROOT, 'bench/results/issue-36/latest') },
    pairs: { type: 'string', default: '3' },
    only: { type: 'string' },
    shapes: { type: 'string' },
  },
});
const picked = args.shapes?.split(',').map((x) => x.trim());
const run = { seconds: Number(args.seconds), warmup: Number(args.warmup), connections: Number(args.connections) };
const PAIRS = Math.max(1, Number(args.pairs));
const SCALE = 0.04;
const PAGE = '50';
const APP = 'bench36-focus';
const TASKS = 'GET /tasks (50)';
/** Seconds of every path in turn after a server starts (its start-up jobs run meanwhile). */
const START_WARMUP = 4;

const lines: string[] = [];
const log = (line = '') => {
  lines.push(line);
  process.stdout.write(`${line}\n`);
};

interface Shape {
  name: string;
  query: Record<string, string>;
}

/** Every listing shape of the issue: four bases, each alone and with `completed=1` and with `type=standard`. */
function shapes(s: Pick<SeedResult, 'keyword' | 'date' | 'range'>): Shape[] {
  const bases: Shape[] = [
    { name: 'unfiltered', query: {} },
    { name: 'date', query: { date: s.date } },
    { name: '31-day range', query: { day_start: s.range.from, day_ends: s.range.to } },
    { name: 'keyword', query: { keyword: s.keyword } },
  ];
  const all = bases.flatMap((b) => [
    b,
    { name: `${b.name} + completed=1`, query: { ...b.query, completed: '1' } },
    { name: `${b.name} + type=standard`, query: { ...b.query, type: 'standard' } },
  ]);
  return picked === undefined ? all : all.filter((shape) => picked.some((p) => shape.name.startsWith(p)));
}
const pathOf = (shape: Shape) => `/api/v1/sessions?${new URLSearchParams({ ...shape.query, limit: PAGE }).toString()}`;

async function seeded(url: string): Promise<SeedResult> {
  const storage = openStorage(url, { poolSize: 4 });
  try {
    await migrateToLatest(storage);
    return await seed(storage, SCALE, log, { adversarial: false });
  } finally {
    await storage.close();
  }
}

interface PageCheck {
  shape: string;
  same: boolean;
  focusIds: number;
  focusBytes: number;
  plainBytes: number;
}

/** Both servers' first page of a shape: the same items (id and occurrence date) in the same order? */
async function checkPage(focus: Server, plain: Server, shape: Shape, token: string): Promise<PageCheck> {
  const get = async (s: Server) => (await fetch(s.base + pathOf(shape), { headers: { authorization: `Bearer ${token}` } })).text();
  const [a, b] = [await get(focus), await get(plain)];
  const keys = (body: string) => (JSON.parse(body) as { data: { id: number; occurrence_date?: string }[] }).data.map((d) => `${d.id}/${d.occurrence_date ?? ''}`);
  const [ka, kb] = [keys(a), keys(b)];
  return { shape: shape.name, same: ka.join() === kb.join() && ka.length > 0, focusIds: ka.length, focusBytes: a.length, plainBytes: b.length };
}

interface SqliteRow {
  shape: string;
  /** The pair whose ratio is the median of `pairs`: one real pair's figures, not a blend. */
  focus: Load;
  plain: Load;
  pairs: { focus: Load; plain: Load }[];
}

/** The pair of median ratio (the lower middle one of an even count). */
function medianPair(pairs: { focus: Load; plain: Load }[]): { focus: Load; plain: Load } {
  const sorted = [...pairs].sort((a, b) => a.focus.reqPerSec / a.plain.reqPerSec - b.focus.reqPerSec / b.plain.reqPerSec);
  return sorted[Math.floor((sorted.length - 1) / 2)] as { focus: Load; plain: Load };
}

async function sqlitePhase(): Promise<{ rows: SqliteRow[]; tasks: Load; checks: PageCheck[] }> {
  const dir = join(tmpdir(), 'focus-bench');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'issue36.db');
  const copy = join(dir, 'issue36-plain.db');
  for (const f of [file, copy]) for (const suffix of ['', '-wal', '-shm']) rmSync(f + suffix, { force: true });
  log('SQLite: seeding');
  const s = await seeded(`sqlite:${file}`);
  copyFileSync(file, copy);
  if (existsSync(`${file}-wal`)) copyFileSync(`${file}-wal`, `${copy}-wal`);
  const focus = await startService(`sqlite:${file}`);
  const plain = await startPlain(copy);
  try {
    log('');
    log('plain server: bench/plain-listing-server.js on a copy of the file (node:http + better-sqlite3; token lookup, one statement per page walking an index of its own in page order, JSON.parse/JSON.stringify)');
    log('same page check (Focus vs plain server, first page of 50: ids and occurrence dates in order; bytes of the body):');
    const checks: PageCheck[] = [];
    for (const shape of shapes(s)) {
      const c = await checkPage(focus, plain, shape, s.reader.token);
      checks.push(c);
      log(`  ${c.same ? 'same' : 'DIFFERENT'}  ${shape.name}: ${c.focusIds} items; Focus ${c.focusBytes} bytes, plain ${c.plainBytes} bytes`);
    }
    const paths = ['/api/v1/tasks', ...shapes(s).map(pathOf)];
    await Promise.all([warmUp(focus, paths, s.reader.token, START_WARMUP), warmUp(plain, paths.slice(1), s.reader.token, START_WARMUP)]);
    const tasks = await load(focus, '/api/v1/tasks', s.reader.token, run);
    const rows: SqliteRow[] = [];
    for (const shape of shapes(s)) {
      // Alternated run by run, the first server changing pair by pair: the shared machine's
      // speed drifts within seconds, so one pair's ratio moved ±0.3; the median pair decides.
      const pairs: SqliteRow['pairs'] = [];
      for (let i = 0; i < PAIRS; i++) {
        const first = i % 2 === 0 ? focus : plain;
        const a = await load(first, pathOf(shape), s.reader.token, run);
        const b = await load(first === focus ? plain : focus, pathOf(shape), s.reader.token, run);
        const [f, p] = first === focus ? [a, b] : [b, a];
        pairs.push({ focus: f, plain: p });
        process.stderr.write(`  sqlite ${shape.name}: Focus ${f.reqPerSec.toFixed(0)}, plain ${p.reqPerSec.toFixed(0)} req/s, load ${loadavg()[0]?.toFixed(1)}\n`);
      }
      rows.push({ shape: shape.name, ...medianPair(pairs), pairs });
    }
    return { rows, tasks, checks };
  } finally {
    await stop(focus);
    await stop(plain);
    for (const f of [file, copy]) for (const suffix of ['', '-wal', '-shm']) rmSync(f + suffix, { force: true });
  }
}

interface PgRow {
  shape: string;
  focus: Load;
  /** Database backends' CPU per request (ms), and the service process's. */
  dbCpuMs: number;
  nodeCpuMs: number;
  yardstickMs?: number;
}

function withSchema(base: string, schema: string): string {
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema},public`);
  url.searchParams.set('application_name', APP);
  return url.toString();
}

async function postgresPhase(base: string): Promise<{ rows: PgRow[]; explains: Record<string, Explained[]> }> {
  const schema = 'bench36';
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`drop schema if exists ${schema} cascade`);
  await admin.query(`create schema ${schema}`);
  const url = withSchema(base, schema);
  try {
    log('');
    log('PostgreSQL: seeding');
    const s = await seeded(url);
    const explains = await explainShapes(url, s);
    const focus = await startService(url);
    const rows: PgRow[] = [];
    try {
      // GET /tasks before and after every shape: the machine's speed drifts within minutes (the
      // yardstick moved 0.16–0.30 ms between runs), so each shape is divided by the yardstick measured around it.
      const listing = shapes(s);
      const measured: Shape[] = [{ name: TASKS, query: {} }, ...listing.flatMap((x) => [x, { name: TASKS, query: {} }])];
      await warmUp(focus, ['/api/v1/tasks', ...listing.map(pathOf)], s.reader.token, START_WARMUP);
      const yardsticks: PgRow[] = [];
      for (const shape of measured) {
        const path = shape.name === TASKS ? '/api/v1/tasks' : pathOf(shape);
        let db = 0;
        let node = 0;
        let finish: (() => Promise<number>) | undefined;
        let nodeStart = 0;
        // Around the measured window only (not the warm-up): the backends of the service's pool, and the service.
        const around = async () => {
          if (finish === undefined) {
            finish = await cpuMeter(() => backendPids(admin, APP));
            nodeStart = cpuMs(focus.child.pid as number);
          } else {
            db = await finish();
            node = cpuMs(focus.child.pid as number) - nodeStart;
          }
        };
        const f = await load(focus, path, s.reader.token, { ...run, around });
        const row: PgRow = { shape: shape.name, focus: f, dbCpuMs: db / Math.max(1, f.requests), nodeCpuMs: node / Math.max(1, f.requests) };
        if (shape.name === TASKS) yardsticks.push(row);
        else rows.push(row);
        process.stderr.write(`  postgres ${shape.name}: ${f.reqPerSec.toFixed(0)} req/s, database ${row.dbCpuMs.toFixed(2)} ms/request\n`);
      }
      rows.forEach((row, i) => {
        row.yardstickMs = ((yardsticks[i] as PgRow).dbCpuMs + (yardsticks[i + 1] as PgRow).dbCpuMs) / 2;
      });
      const mean = (pick: (r: PgRow) => number) => yardsticks.reduce((sum, r) => sum + pick(r), 0) / yardsticks.length;
      // The GET /tasks row: the CPU columns are the mean of its runs; req/s and p99 its first run's.
      rows.unshift({ ...(yardsticks[0] as PgRow), dbCpuMs: mean((r) => r.dbCpuMs), nodeCpuMs: mean((r) => r.nodeCpuMs) });
      log(`GET /tasks (50) database CPU, before and after each shape: ${yardsticks.map((r) => r.dbCpuMs.toFixed(3)).join(', ')} ms/request; each shape's ratio uses the two around it`);
    } finally {
      await stop(focus);
    }
    return { rows, explains };
  } finally {
    await admin.query(`drop schema if exists ${schema} cascade`);
    await admin.end();
  }
}

/** EXPLAIN (ANALYZE, BUFFERS) of the statements each shape's listing runs (and GET /tasks'), captured in-process. */
async function explainShapes(url: string, s: SeedResult): Promise<Record<string, Explained[]>> {
  const storage = openStorage(url, { poolSize: 2 });
  try {
    const out: Record<string, Explained[]> = {};
    const calls: [string, Parameters<typeof prepareCall>[2]][] = [
      [TASKS, { kind: 'listTasks', query: { limit: PAGE } }],
      ...shapes(s).map((x): [string, Parameters<typeof prepareCall>[2]] => [x.name, { kind: 'listSessions', query: { ...x.query, limit: PAGE } }]),
    ];
    for (const [name, call] of calls) {
      out[name] = await explainAnalyze(storage, await prepareCall(storage, s.reader.token, call));
    }
    return out;
  } finally {
    await storage.close();
  }
}

async function main(): Promise<void> {
  const started = new Date();
  log(`issue 36 listings — ${started.toISOString()} — scale ${SCALE}, pages of ${PAGE}, c${run.connections}, ${run.warmup} s warm-up + ${run.seconds} s per run`);
  log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load average ${loadavg().map((x) => x.toFixed(2)).join(', ')} (shared: figures are noisy)`);
  const sqlite = args.only === 'postgres' ? { rows: [], tasks: undefined, checks: [] } : await sqlitePhase();
  const base = [process.env.DATABASE_URL, process.env.TEST_DATABASE_URL].find((u) => u !== undefined && /^postgres(ql)?:\/\//.test(u));
  const postgres = base === undefined || args.only === 'sqlite' ? undefined : await postgresPhase(base);
  const text = report({ sqlite, postgres: postgres?.rows, explains: postgres?.explains, tasks: TASKS, load: loadavg() });
  for (const line of text) log(line);
  const out = args.out;
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(`${out}.json`, `${JSON.stringify({ startedAt: started.toISOString(), finishedAt: new Date().toISOString(), scale: SCALE, run, sqlite, postgres: postgres?.rows ?? null, goals: goals({ sqlite, postgres: postgres?.rows, tasks: TASKS }) }, null, 2)}\n`);
  writeFileSync(`${out}.txt`, `${lines.join('\n')}\n`);
  if (postgres !== undefined) writeFileSync(`${out}-postgres-explain.txt`, explainText(postgres.explains));
  process.stderr.write(`wrote ${out}.json, ${out}.txt${postgres === undefined ? '' : `, ${out}-postgres-explain.txt`}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
