/**
 * The largest page a session listing can answer under the per-session limits
 * (docs/security.md, "Cost of a request"): 500 sessions, each at every limit at once
 * (200-character name of escaped characters, 100 collaborators with 64-character handles,
 * a 12 KiB website blocker of 500 URLs, 4 KiB of snooze apps, a daily series with 200
 * removed occurrences), listed undated and dated, in-process through inject().
 *
 *   npx tsx bench/largest-page.ts                      # SQLite
 *   TEST_DATABASE_URL=postgres://… npx tsx bench/largest-page.ts postgres
 *
 * COLLAB=0 / EXC=0 leave collaborators / removed occurrences out, to see what each costs.
 */
import { createTestApp } from '../test/helpers/harness.js';
import { MAX_REMOVED_OCCURRENCES, MAX_SNOOZE_APPS_BYTES, MAX_WEBSITE_BLOCKER_BYTES, addMembers } from './service-calls.js';

const dialect = (process.argv[2] ?? 'sqlite') as 'sqlite' | 'postgres';
const t = await createTestApp(dialect);
try {
  const alice = await t.user('alice', [1]);
  const handles = Array.from({ length: Number(process.env.COLLAB ?? 100) }, (_, i) => `${String(i).padStart(3, '0')}${'h'.repeat(61)}`);
  await addMembers(t.storage, handles, [1]);
  const blocker = { mode: 'custom', category: ['social', 'news', 'video', 'shopping', 'games', 'adult', 'chat', 'email'], urls: Array.from({ length: 500 }, (_, i) => `s${i}.example-site.co`) };
  const snooze = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`${String(i).padStart(2, '0')}`.padEnd(12, '\u0001'), true]));
  const weights = { blocker: Buffer.byteLength(JSON.stringify(blocker)), snooze: Buffer.byteLength(JSON.stringify(snooze)) };
  if (weights.blocker > MAX_WEBSITE_BLOCKER_BYTES || weights.snooze > MAX_SNOOZE_APPS_BYTES) throw new Error(`over the limits: ${JSON.stringify(weights)}`);
  const body = {
    org_id: 1, name: `${'\u0001'.repeat(198)}ab`, type: 'standard', duration: 60, schedule: '2026-01-01', time: '9:00 AM',
    timezone: 'America/Argentina/ComodRivadavia', is_public: true, collaborator: handles, website_blocker_enabled: true,
    website_blocker: blocker, snooze_enabled: true, snooze_apps: snooze, is_recurring: 1, occurrence: 'daily',
  };
  const ids: number[] = [];
  for (let i = 0; i < 500; i++) {
    const res = await alice.post<{ data: { id: number } }>('/api/v1/sessions', body);
    if (res.status !== 201) throw new Error(res.text);
    ids.push(res.body.data.id);
  }
  const removed = Number(process.env.EXC ?? MAX_REMOVED_OCCURRENCES);
  const rows = ids.flatMap((id) => Array.from({ length: removed }, (_, d) => ({ session_id: id, occurrence_date: new Date(Date.UTC(2026, 0, 2 + d * 2)).toISOString().slice(0, 10) })));
  for (let i = 0; i < rows.length; i += 5000) await t.storage.db.insertInto('session_exceptions').values(rows.slice(i, i + 5000)).execute();
  await t.storage.refreshStatistics();
  console.log(`${dialect}: blocker ${weights.blocker} B, snooze ${weights.snooze} B, ${handles.length} collaborators, ${removed} removed occurrences per series`);
  for (const url of ['/api/v1/sessions?limit=500', '/api/v1/sessions?limit=500&day_start=2026-01-01&day_ends=2026-12-31', '/api/v1/sessions?limit=100']) {
    const times: number[] = [];
    let bytes = 0;
    for (let round = 0; round < 5; round++) {
      const started = performance.now();
      const res = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${alice.token}` } });
      times.push(performance.now() - started);
      bytes = res.rawPayload.length;
    }
    const warm = times.slice(1).sort((a, b) => a - b);
    console.log(`${url}: ${bytes} bytes, median ${warm[Math.floor(warm.length / 2)]?.toFixed(0)} ms, min ${warm[0]?.toFixed(0)} ms`);
  }
} finally {
  await t.close();
}
