import type { Kysely } from 'kysely';
import type { Database } from '../../src/storage/tables.js';

/*
 * Writers that remember what the server acknowledged, and a check that the
 * database holds every acknowledged write and nothing half-applied.
 */

export type Op = 'create' | 'update' | 'bulk-new' | 'bulk-again';
export const OPS: readonly Op[] = ['create', 'update', 'bulk-new', 'bulk-again'];
const BULK_SIZE = 40;

interface TaskEntry {
  acked: string;
  /** Contexts sent after the last acknowledgement: any of them may have been applied. */
  maybe: Set<string>;
}

interface BulkEntry {
  size: number;
  ackedVersion: number;
  attemptedVersion: number;
}

export class Ledger {
  readonly tasks = new Map<string, TaskEntry>();
  readonly unackedCreates = new Set<string>();
  readonly bulks = new Map<string, BulkEntry>();
  readonly byWriter = new Map<number, { tasks: string[]; sources: string[]; n: number }>();
  readonly statuses = new Map<number, number>();
  acknowledged = 0;
  unanswered = 0;

  writer(w: number) {
    let state = this.byWriter.get(w);
    if (state === undefined) {
      state = { tasks: [], sources: [], n: 0 };
      this.byWriter.set(w, state);
    }
    return state;
  }
}

export interface Target {
  base: string;
  token: string;
  sessionId: number;
}

type Outcome = { status: number; body: unknown } | 'no-answer';

async function send(target: Target, method: string, path: string, body: unknown): Promise<Outcome> {
  try {
    const res = await fetch(target.base + path, {
      method,
      headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    return { status: res.status, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
  } catch {
    return 'no-answer';
  }
}

/** One writer: runs its ops in order, one request at a time, until told to stop or the server is gone. */
export async function runWriter(target: () => Target, ledger: Ledger, w: number, ops: readonly Op[], stop: { now: boolean; onNoAnswer: 'stop' | 'retry' }) {
  const me = ledger.writer(w);
  for (const op of ops) {
    if (stop.now) return;
    const n = me.n++;
    let outcome: Outcome;
    if (op === 'create' || (op === 'update' && me.tasks.length === 0)) {
      const context = `w${w}-c${n}`;
      outcome = await send(target(), 'POST', '/api/v1/tasks', { context, session_id: target().sessionId });
      if (outcome !== 'no-answer' && outcome.status === 201) {
        const id = (outcome.body as { data: { id: string } }).data.id;
        ledger.tasks.set(id, { acked: context, maybe: new Set() });
        me.tasks.push(id);
      } else ledger.unackedCreates.add(context);
    } else if (op === 'update') {
      const id = me.tasks[n % me.tasks.length] as string;
      const entry = ledger.tasks.get(id) as TaskEntry;
      const context = `${entry.acked.split('-u')[0]}-u${n}`;
      entry.maybe.add(context);
      outcome = await send(target(), 'PUT', `/api/v1/tasks/${id}`, { context });
      if (outcome !== 'no-answer' && outcome.status === 200) {
        entry.acked = context;
        entry.maybe.clear();
      }
    } else {
      const again = op === 'bulk-again' && me.sources.length > 0;
      const source = again ? (me.sources[n % me.sources.length] as string) : `w${w}-b${n}`;
      const entry = ledger.bulks.get(source) ?? { size: BULK_SIZE, ackedVersion: 0, attemptedVersion: 0 };
      if (!again) {
        ledger.bulks.set(source, entry);
        me.sources.push(source);
      }
      const version = ++entry.attemptedVersion;
      const tasks = Array.from({ length: entry.size }, (_, i) => ({ context: `${source}:v${version}:${i}`, source, source_id: i }));
      outcome = await send(target(), 'POST', '/api/v1/tasks/bulk', { session_id: target().sessionId, tasks });
      if (outcome !== 'no-answer' && outcome.status === 200) entry.ackedVersion = version;
    }
    if (outcome === 'no-answer') {
      ledger.unanswered++;
      if (stop.onNoAnswer === 'stop') return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    } else {
      ledger.statuses.set(outcome.status, (ledger.statuses.get(outcome.status) ?? 0) + 1);
      if (outcome.status < 300) ledger.acknowledged++;
      else if (outcome.status === 503) await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** Every acknowledged write is there; every bulk import is all there or not at all; nothing else exists. */
export async function verify(db: Kysely<Database>, ledger: Ledger): Promise<string[]> {
  const problems: string[] = [];
  const rows = await db.selectFrom('tasks').select(['id', 'context', 'source', 'source_id']).execute();
  const direct = rows.filter((r) => r.source === null);
  const byId = new Map(direct.map((r) => [String(r.id), r]));
  for (const [id, entry] of ledger.tasks) {
    const row = byId.get(id);
    if (row === undefined) problems.push(`acknowledged task ${id} (${entry.acked}) is missing`);
    else if (row.context !== entry.acked && !entry.maybe.has(row.context)) {
      problems.push(`task ${id} has "${row.context}", expected "${entry.acked}" or one of [${[...entry.maybe].join(', ')}]`);
    }
  }
  for (const row of direct) {
    if (!ledger.tasks.has(String(row.id)) && !ledger.unackedCreates.has(row.context)) problems.push(`unexpected task ${row.id} "${row.context}"`);
  }
  const bySource = new Map<string, typeof rows>();
  for (const r of rows) if (r.source !== null) bySource.set(r.source, [...(bySource.get(r.source) ?? []), r]);
  for (const [source, entry] of ledger.bulks) {
    const got = bySource.get(source) ?? [];
    bySource.delete(source);
    if (got.length === 0) {
      if (entry.ackedVersion > 0) problems.push(`acknowledged import ${source} is missing`);
      continue;
    }
    if (got.length !== entry.size) {
      problems.push(`import ${source} is half applied: ${got.length} of ${entry.size} rows`);
      continue;
    }
    const versions = new Set(got.map((r) => /:v(\d+):/.exec(r.context)?.[1]));
    const version = Number([...versions][0]);
    if (versions.size !== 1) problems.push(`import ${source} mixes versions ${[...versions].join(', ')}`);
    else if (version < entry.ackedVersion || version > entry.attemptedVersion) {
      problems.push(`import ${source} is at v${version}; acknowledged v${entry.ackedVersion}, attempted up to v${entry.attemptedVersion}`);
    }
    for (const r of got) if (r.context !== `${source}:v${version}:${r.source_id}`) problems.push(`import ${source} row ${r.source_id} has "${r.context}"`);
  }
  for (const source of bySource.keys()) problems.push(`unexpected import ${source}`);
  return problems;
}
