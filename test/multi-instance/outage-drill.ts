import { createAuthService } from '../../src/features/auth/auth.service.js';
import { openStorage } from '../../src/storage/database.js';
import { type HttpResult, http } from '../helpers/http.js';
import { startServer } from '../helpers/server-process.js';

/*
 * A database outage under load, seen from outside: a real `focus serve` process takes a
 * steady stream of requests while `disrupt` takes PostgreSQL away and `restore` brings
 * it back. Shared by the vitest suite (a role locked out, its connections killed) and by
 * scripts/pg-restart-check.ts (a real server restart, CI only).
 */

export interface Observation extends HttpResult {
  at: number;
  path: string;
  phase: 'before' | 'outage' | 'after';
}

export interface DrillReport {
  observations: Observation[];
  /** ms from restore() returning to the first /readyz 200 and the first 2xx API answer after it. */
  recoveredInMs: number | undefined;
  /** The server process was still the same one at the end. */
  serverAlive: boolean;
  serverOutput: string[];
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function runOutageDrill(options: {
  databaseUrl: string;
  disrupt: () => Promise<void>;
  restore: () => Promise<void>;
  outageMs: number;
  /** Give up waiting for recovery after this long. */
  recoveryBudgetMs: number;
  env?: Record<string, string>;
}): Promise<DrillReport> {
  const storage = openStorage({ databaseUrl: options.databaseUrl });
  let token: string;
  try {
    await storage.migrate();
    await createAuthService(storage).addUser('loader', [1]);
    token = (await createAuthService(storage).issueToken('loader')).token;
  } finally {
    await storage.close();
  }
  // Fail fast: a request should not wait long for a connection that is not coming.
  const server = await startServer({ DATABASE_URL: options.databaseUrl, RATE_LIMIT: '0', DB_CONNECT_TIMEOUT_MS: '1000', ...options.env });
  const observations: Observation[] = [];
  let phase: Observation['phase'] = 'before';
  let running = true;
  try {
    const created = await http(server.url, 'POST', '/api/v1/sessions', token, {
      org_id: 1, name: 'Load', type: 'standard', duration: 60, schedule: '2026-03-10', time: '9:00 AM', is_public: true,
    });
    if (created.status !== 201) throw new Error(`could not create a session: ${created.status} ${JSON.stringify(created.body)}`);
    const sessionId = (created.body as { data: { id: number } }).data.id;

    const observe = async (method: string, path: string, body?: unknown) => {
      const result = await http(server.url, method, path, path === '/readyz' ? undefined : token, body);
      observations.push({ ...result, at: Date.now(), path, phase });
      return result;
    };
    let n = 0;
    const worker = async () => {
      while (running) {
        n++;
        if (n % 2 === 0) await observe('GET', '/api/v1/tasks?limit=5');
        else await observe('POST', '/api/v1/tasks', { context: `load ${n}`, session_id: sessionId });
        await sleep(10);
      }
    };
    const prober = async () => {
      while (running) {
        await observe('GET', '/readyz');
        await sleep(50);
      }
    };
    const load = Promise.all([worker(), worker(), worker(), worker(), prober()]);

    await sleep(500);
    phase = 'outage';
    await options.disrupt();
    await sleep(options.outageMs);
    await options.restore();
    phase = 'after';
    const restoredAt = Date.now();
    let recoveredInMs: number | undefined;
    while (Date.now() - restoredAt < options.recoveryBudgetMs) {
      const ready = observations.find((o) => o.phase === 'after' && o.path === '/readyz' && o.status === 200);
      const served = ready !== undefined && observations.find((o) => o.phase === 'after' && o.path !== '/readyz' && o.at >= ready.at && o.status < 300);
      if (served) {
        recoveredInMs = served.at - restoredAt;
        break;
      }
      await sleep(50);
    }
    // A little more steady state, to see that recovery holds.
    await sleep(500);
    running = false;
    await load;
    const serverAlive = (await http(server.url, 'GET', '/healthz')).status === 200;
    return { observations, recoveredInMs, serverAlive, serverOutput: server.output };
  } finally {
    running = false;
    await server.stop();
  }
}

/** Counts by phase and status, for assertions and for a readable failure message. */
export function summarize(report: DrillReport): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const o of report.observations) {
    const key = `${o.phase} ${o.path === '/readyz' ? '/readyz' : 'api'}`;
    const bucket = (out[key] ??= {});
    bucket[String(o.status)] = (bucket[String(o.status)] ?? 0) + 1;
  }
  return out;
}

/** What must hold; returns the broken rules (empty when the drill passed). */
export function judge(report: DrillReport, recoveryBudgetMs: number): string[] {
  const problems: string[] = [];
  const bad = report.observations.filter((o) => o.status === 0 || (o.status >= 500 && o.status !== 503));
  if (bad.length > 0) problems.push(`${bad.length} answers were 5xx other than 503 or dropped connections: ${JSON.stringify(bad.slice(0, 3))}`);
  const unavailable = report.observations.filter((o) => o.status === 503);
  if (!report.observations.some((o) => o.phase === 'outage' && o.path === '/readyz' && o.status === 503)) problems.push('/readyz never said 503 during the outage');
  if (!report.observations.some((o) => o.phase === 'outage' && o.path !== '/readyz' && o.status === 503)) problems.push('no API request got a 503 during the outage');
  const notProblem = unavailable.filter((o) => o.path !== '/readyz' && !o.contentType.startsWith('application/problem+json'));
  if (notProblem.length > 0) problems.push(`${notProblem.length} 503s were not problem+json`);
  if (report.recoveredInMs === undefined) problems.push(`no recovery within ${recoveryBudgetMs} ms after the database came back`);
  if (!report.serverAlive) problems.push('the server process did not survive');
  const before = report.observations.filter((o) => o.phase === 'before');
  if (before.length === 0 || before.some((o) => o.status >= 300)) problems.push('the service was not healthy before the outage');
  return problems;
}
