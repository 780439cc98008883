/** The table and the goals of bench/issue36.ts (issue 36's "How it is shown"). */
import type { Explained, Load } from './issue36-measure.js';

interface Measured {
  /** Empty (tasks undefined) in a `--only postgres` run. */
  sqlite: { rows: { shape: string; focus: Load; plain: Load; pairs: { focus: Load; plain: Load }[] }[]; tasks: Load | undefined; checks: { shape: string; same: boolean }[] };
  /** yardstickMs: GET /tasks' database CPU per request in the runs just before and after this shape, averaged (the ratio's denominator). */
  postgres: { shape: string; focus: Load; dbCpuMs: number; nodeCpuMs: number; yardstickMs?: number }[] | undefined;
  tasks: string;
}

export interface Goal {
  goal: string;
  ok: boolean;
  detail: string;
}

const PLAIN_RATIO = 0.9;
const P99_MS = 100;
const CPU_RATIO = 3;
const PG_VS_SQLITE = 0.5;

const r0 = (x: number) => x.toFixed(0);
/** Each alternated pair's Focus ÷ plain req/s, in the order run. */
const ratiosOf = (row: Measured['sqlite']['rows'][number]) => row.pairs.map((p) => (p.focus.reqPerSec / p.plain.reqPerSec).toFixed(2)).join(', ');

export function goals(m: Measured): Goal[] {
  const out: Goal[] = [];
  const same = new Map(m.sqlite.checks.map((c) => [c.shape, c.same]));
  for (const row of m.sqlite.rows) {
    const ratio = row.focus.reqPerSec / row.plain.reqPerSec;
    const comparable = same.get(row.shape) === true;
    out.push({
      goal: `SQLite ${row.shape}: ≥ ${PLAIN_RATIO}× the plain server`,
      ok: comparable && ratio >= PLAIN_RATIO,
      detail: `${ratio.toFixed(2)}× (${r0(row.focus.reqPerSec)} vs ${r0(row.plain.reqPerSec)} req/s; median of pairs ${ratiosOf(row)})${comparable ? '' : '; pages differ: not comparable'}`,
    });
    out.push({ goal: `SQLite ${row.shape}: p99 < ${P99_MS} ms at c50`, ok: row.focus.p99 < P99_MS && row.focus.non2xx === 0, detail: `p99 ${row.focus.p99} ms (plain server ${row.plain.p99} ms), non-2xx ${row.focus.non2xx}` });
  }
  const pg = m.postgres;
  const tasks = pg?.find((r) => r.shape === m.tasks);
  for (const row of pg?.filter((r) => r !== tasks) ?? []) {
    const yardstick = yardstickOf(row, tasks);
    const cpu = row.dbCpuMs / yardstick;
    out.push({ goal: `PostgreSQL ${row.shape}: database CPU ≤ ${CPU_RATIO}× ${m.tasks}`, ok: cpu <= CPU_RATIO, detail: `${cpu.toFixed(1)}× (${row.dbCpuMs.toFixed(2)} vs ${yardstick.toFixed(2)} ms/request)` });
    const lite = m.sqlite.rows.find((r) => r.shape === row.shape);
    const vs = lite === undefined ? Number.NaN : row.focus.reqPerSec / lite.focus.reqPerSec;
    out.push({ goal: `PostgreSQL ${row.shape}: ≥ ${PG_VS_SQLITE}× the SQLite req/s`, ok: vs >= PG_VS_SQLITE, detail: `${vs.toFixed(2)}× (${r0(row.focus.reqPerSec)} vs ${r0(lite?.focus.reqPerSec ?? Number.NaN)} req/s)` });
  }
  return out;
}

type PgRow = NonNullable<Measured['postgres']>[number];
/** What a shape's database CPU is divided by: GET /tasks' around it when measured so, else GET /tasks' of the whole run. */
const yardstickOf = (row: PgRow, tasks: PgRow | undefined) => row.yardstickMs ?? tasks?.dbCpuMs ?? Number.NaN;

/** The console/text report: the table of both databases, then the goals. */
export function report(m: Measured & { load: number[]; explains: Record<string, Explained[]> | undefined }): string[] {
  const lines: string[] = [''];
  const pgOf = (shape: string) => m.postgres?.find((r) => r.shape === shape);
  const tasksPg = pgOf(m.tasks);
  lines.push('| shape | SQLite Focus req/s | plain req/s | ratio (each pair) | p99 ms Focus / plain | CPU ms/req Focus / plain | KB | PostgreSQL req/s | PG p99 ms | PG ÷ SQLite | database CPU ms/req | × GET /tasks | service CPU ms/req |');
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  const pgCells = (shape: string, sqliteReqPerSec: number) => {
    const p = pgOf(shape);
    if (p === undefined) return '– | – | – | – | – | –';
    const times = tasksPg === undefined ? '' : `${(p.dbCpuMs / yardstickOf(p, tasksPg)).toFixed(1)}×`;
    return `${r0(p.focus.reqPerSec)} | ${p.focus.p99} | ${(p.focus.reqPerSec / sqliteReqPerSec).toFixed(2)}× | ${p.dbCpuMs.toFixed(2)} | ${times} | ${p.nodeCpuMs.toFixed(2)}`;
  };
  const t = m.sqlite.tasks;
  if (t === undefined) lines.push(`| ${m.tasks} | – | – | – | – | – | – | ${pgCells(m.tasks, Number.NaN)} |`);
  else lines.push(`| ${m.tasks} | ${r0(t.reqPerSec)} | – | – | ${t.p99} / – | ${t.cpuMsPerRequest.toFixed(2)} / – | ${(t.bytes / 1024).toFixed(1)} | ${pgCells(m.tasks, t.reqPerSec)} |`);
  // A PostgreSQL-only run: its shapes without SQLite's cells.
  if (t === undefined) for (const p of m.postgres?.filter((r) => r.shape !== m.tasks) ?? []) lines.push(`| ${p.shape} | – | – | – | – | – | – | ${pgCells(p.shape, Number.NaN)} |`);
  for (const row of m.sqlite.rows) {
    const f = row.focus;
    lines.push(
      `| ${row.shape} | ${r0(f.reqPerSec)} | ${r0(row.plain.reqPerSec)} | ${(f.reqPerSec / row.plain.reqPerSec).toFixed(2)}× (${ratiosOf(row)}) | ${f.p99} / ${row.plain.p99} | ${f.cpuMsPerRequest.toFixed(2)} / ${row.plain.cpuMsPerRequest.toFixed(2)} | ${(f.bytes / 1024).toFixed(1)} | ${pgCells(row.shape, f.reqPerSec)} |`,
    );
  }
  lines.push('(SQLite: the pair of median ratio among the alternated pairs, whose ratios follow in brackets. KB: bytes per Focus response, headers included. database CPU: utime+stime of the PostgreSQL backends of the service\'s pool, from /proc/<pid>/stat around the measured window, ÷ requests.)');
  lines.push(...explainSummary(m.explains));
  lines.push(`load average at the end ${m.load.map((x) => x.toFixed(2)).join(', ')}`);
  lines.push('');
  lines.push('goals:');
  for (const g of goals(m)) lines.push(`  ${g.ok ? 'PASS' : 'MISS'}  ${g.goal} — ${g.detail}`);
  return lines;
}

/** Per shape: the statements' planning and execution time and shared buffers under EXPLAIN (ANALYZE, BUFFERS). */
function explainSummary(explains: Record<string, Explained[]> | undefined): string[] {
  if (explains === undefined) return [];
  const lines = ['', 'PostgreSQL, each shape\'s statements under EXPLAIN (ANALYZE, BUFFERS), one run (timing adds overhead): statements, planning ms, execution ms, shared buffers (per statement)'];
  for (const [name, plans] of Object.entries(explains)) {
    const sum = (f: (e: Explained) => number) => plans.reduce((a, e) => a + f(e), 0);
    const each = plans.map((e) => `${e.planningMs.toFixed(2)}+${e.executionMs.toFixed(2)} ms/${e.buffers}`).join(', ');
    lines.push(`  ${name}: ${plans.length} statements, planning ${sum((e) => e.planningMs).toFixed(2)} ms, execution ${sum((e) => e.executionMs).toFixed(2)} ms, ${sum((e) => e.buffers)} buffers (${each})`);
    const generic = plans.map((e) => e.generic).filter((g) => g !== undefined);
    if (generic.length > 0) {
      const total = (f: (g: (typeof generic)[number]) => number) => generic.reduce((a, g) => a + f(g), 0);
      lines.push(`    generic plans: execution ${total((g) => g.executionMs).toFixed(2)} ms, ${total((g) => g.buffers)} buffers (${generic.map((g) => `${g.executionMs.toFixed(2)} ms/${g.buffers}`).join(', ')})`);
    }
  }
  return lines;
}

/** The file kept in bench/results/: every statement, its parameters and its plan. */
export function explainText(explains: Record<string, Explained[]>): string {
  const out: string[] = [];
  for (const [name, plans] of Object.entries(explains)) {
    out.push(`=== ${name}: ${plans.length} statements`, '');
    for (const e of plans) {
      out.push(e.sql, `  parameters: ${JSON.stringify(e.parameters)}`, ...e.plan.map((l) => `  ${l}`), '');
      if (e.generic !== undefined) out.push('  generic plan (what a named statement may keep):', ...e.generic.plan.map((l) => `  ${l}`), '');
    }
  }
  return `${out.join('\n')}\n`;
}
