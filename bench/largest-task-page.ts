/**
 * The largest page `GET /tasks` can answer under the per-task limits (docs/security.md,
 * "Cost of a request"): 1,000 tasks (the default page), each at every limit at once (a
 * 2,000-character context of characters JSON escapes as `\u0001`, a 64-character source
 * likewise, a 255-character string source_id of 4-byte characters), listed in-process
 * through inject().
 *
 *   npx tsx bench/largest-task-page.ts                      # SQLite
 *   TEST_DATABASE_URL=postgres://… npx tsx bench/largest-task-page.ts postgres
 *
 * TYPICAL=1 lists 1,000 ordinary tasks instead (80-character contexts, integer ids), for
 * comparison.
 */
import { createTestApp } from '../test/helpers/harness.js';
import { MAX_TASK_PAGE } from './service-calls.js';

const dialect = (process.argv[2] ?? 'sqlite') as 'sqlite' | 'postgres';
const t = await createTestApp(dialect);
try {
  const alice = await t.user('alice', [1]);
  const session = await alice.post<{ data: { id: number } }>('/api/v1/sessions', { org_id: 1, name: 'Hoard', type: 'standard', duration: 60, schedule: '2026-01-01', time: '9:00 AM' });
  const typical = process.env.TYPICAL === '1';
  const context = typical ? 'Review the onboarding checklist with the new team members before Friday. #'.padEnd(80, 'x') : `a${'\u0001'.repeat(1998)}b`;
  const source = typical ? 'todoist' : '\u0001'.repeat(64);
  const sourceId = (n: number) => (typical ? 7_000_000 + n : `${String(n).padStart(4, '0')}${'😀'.repeat(251)}`);
  // 50 items a request stay under the 1 MiB body limit (each maximal context is 12 KB of JSON escapes).
  for (let first = 0; first < MAX_TASK_PAGE; first += 50) {
    const tasks = Array.from({ length: 50 }, (_, i) => ({ context, source, source_id: sourceId(first + i) }));
    const res = await alice.post('/api/v1/tasks/bulk', { session_id: session.body.data.id, tasks });
    if (res.status !== 200) throw new Error(res.text.slice(0, 500));
  }
  await t.storage.refreshStatistics();
  const times: number[] = [];
  let bytes = 0;
  let items = 0;
  for (let round = 0; round < 5; round++) {
    const started = performance.now();
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/tasks', headers: { authorization: `Bearer ${alice.token}` } });
    times.push(performance.now() - started);
    bytes = res.rawPayload.length;
    items = res.json<{ data: unknown[] }>().data.length;
  }
  const warm = times.slice(1).sort((a, b) => a - b);
  console.log(`${dialect}${typical ? ' (typical tasks)' : ''}: GET /api/v1/tasks: ${items} tasks, ${bytes} bytes, median ${warm[Math.floor(warm.length / 2)]?.toFixed(0)} ms, min ${warm[0]?.toFixed(0)} ms`);
} finally {
  await t.close();
}
