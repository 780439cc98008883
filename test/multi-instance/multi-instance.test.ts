import { afterAll, beforeAll, expect, it } from 'vitest';
import { createAuthService } from '../../src/features/auth/auth.service.js';
import { openStorage } from '../../src/storage/database.js';
import { type TestDatabase, createTestDatabase, describeEachDialect, listAll } from '../helpers/harness.js';
import { type HttpResult, http, inParallel } from '../helpers/http.js';
import { type ServerProcess, buildOnce, startServer } from '../helpers/server-process.js';

/*
 * Two real `focus serve` processes on one database (a PostgreSQL schema, or one SQLite
 * file) take interleaved creates, updates, deletes and overlapping bulk imports. The end
 * state must equal what one instance produces from the same requests: no duplicate,
 * no lost update, no 5xx (SQLITE_BUSY would surface as a 503).
 */

interface World {
  servers: ServerProcess[];
  alice: string;
  bob: string;
  sessionId: number;
  results: HttpResult[];
}

const IMPORT_RANGES: [number, number][] = [[0, 150], [75, 225], [50, 200], [125, 300], [0, 300], [295, 305]];
/** Distinct keys over all imports. */
const IMPORTED_KEYS = 305;
const DUPLICATE_KEYS = 30;
const PLAIN_TASKS = 40;

async function openWorld(database: TestDatabase, instances: number): Promise<World> {
  // Started together, so that their migrations race as they would in a rolling deploy.
  const servers = await Promise.all(Array.from({ length: instances }, () => startServer({ DATABASE_URL: database.url, RATE_LIMIT: '0' })));
  const storage = openStorage({ databaseUrl: database.url });
  try {
    await storage.migrate();
    await createAuthService(storage).addUser('alice', [1]);
    await createAuthService(storage).addUser('bob', [1]);
    const alice = (await createAuthService(storage).issueToken('alice')).token;
    const bob = (await createAuthService(storage).issueToken('bob')).token;
    const session = await http(servers[0]?.url ?? '', 'POST', '/api/v1/sessions', alice, {
      org_id: 1, name: 'Shared', type: 'standard', duration: 60, schedule: '2026-03-10', time: '9:00 AM', is_public: true,
    });
    expect(session.status, JSON.stringify(session.body)).toBe(201);
    const sessionId = Number((session.body as { data: { id: number } }).data.id);
    return { servers, alice, bob, sessionId, results: [] };
  } finally {
    await storage.close();
  }
}

/** The n-th request of a kind goes to instance n mod N. */
function on(world: World, n: number): string {
  return world.servers[n % world.servers.length]?.url ?? '';
}

async function call(world: World, n: number, method: string, path: string, token: string, body?: unknown): Promise<HttpResult> {
  const result = await http(on(world, n), method, path, token, body);
  world.results.push(result);
  return result;
}

/** Every request of the workload; the final state does not depend on their interleaving. */
async function workload(world: World) {
  const { alice, bob, sessionId } = world;
  const duplicateCreates = inParallel(Array.from({ length: DUPLICATE_KEYS }, (_, k) => k), 6, (k) =>
    // The same key sent to both instances at once: one must win, the other must see 409.
    Promise.all([0, 1].map((side) =>
      call(world, k + side, 'POST', '/api/v1/tasks', alice, { context: `dup ${k}`, session_id: sessionId, source: 'manual', source_id: k }),
    )),
  );
  const plainCreates = inParallel(Array.from({ length: PLAIN_TASKS }, (_, i) => i), 6, (i) =>
    call(world, i, 'POST', '/api/v1/tasks', alice, { context: `plain ${i}`, session_id: sessionId }),
  );
  const imports = Promise.all(IMPORT_RANGES.map(([from, to], i) =>
    call(world, i, 'POST', '/api/v1/tasks/bulk', bob, {
      session_id: sessionId,
      tasks: Array.from({ length: to - from }, (_, k) => ({ context: `import ${from + k}`, source: 'todoist', source_id: from + k })),
    }),
  ));
  const [duplicates, plain, imported] = await Promise.all([duplicateCreates, plainCreates, imports]);

  const plainIds = plain.map((r) => Number((r.body as { data: { id: string } }).data.id));
  // Two instances change different fields of one task at once; an even task is also
  // deleted by both instances at once.
  const edits = inParallel(plainIds, 6, (id, i) =>
    Promise.all([
      call(world, i, 'PUT', `/api/v1/tasks/${id}`, alice, { is_completed: true }),
      call(world, i + 1, 'PUT', `/api/v1/tasks/${id}`, alice, { context: `edited ${i}` }),
      ...(i % 2 === 0
        ? [call(world, i, 'DELETE', `/api/v1/tasks/${id}`, alice), call(world, i + 1, 'DELETE', `/api/v1/tasks/${id}`, alice)]
        : []),
    ]),
  );
  const edited = await edits;
  return { duplicates, plain, imported, edited };
}

/** Everything a user can list, without ids and timestamps, in a stable order. */
async function snapshot(world: World, token: string) {
  type Row = { context: string; is_completed: boolean; source: string | null; source_id: number | null };
  const listed = await listAll<Row>({ get: (url) => http(on(world, 0), 'GET', url, token) }, '/api/v1/tasks', '', 500);
  const rows = listed.map((t) => ({ context: t.context, is_completed: t.is_completed, source: t.source, source_id: t.source_id }));
  return rows.sort((a, b) => (a.context < b.context ? -1 : a.context > b.context ? 1 : 0));
}

beforeAll(buildOnce, 180_000);

describeEachDialect('two server processes on one database', (dialect) => {
  const databases: TestDatabase[] = [];
  const worlds: World[] = [];
  let twin: Awaited<ReturnType<typeof workload>>;
  let twinWorld: World;
  let singleWorld: World;

  beforeAll(async () => {
    const [shared, alone] = await Promise.all([createTestDatabase(dialect), createTestDatabase(dialect)]);
    databases.push(shared, alone);
    // The reference run on one instance goes alongside; it has a database of its own.
    const [twinOpened, singleOpened] = await Promise.all([openWorld(shared, 2), openWorld(alone, 1)]);
    twinWorld = twinOpened;
    singleWorld = singleOpened;
    worlds.push(twinWorld, singleWorld);
    [twin] = await Promise.all([workload(twinWorld), workload(singleWorld)]);
  }, 120_000);

  afterAll(async () => {
    for (const world of worlds) await Promise.all(world.servers.map((s) => s.stop()));
    for (const database of databases) await database.drop();
  });

  it('answers no request with a 5xx or a dropped connection', () => {
    const failures = [...twinWorld.results, ...singleWorld.results].filter((r) => r.status === 0 || r.status >= 500);
    expect(failures).toEqual([]);
  });

  it('creates a contested key exactly once: one 201 and one 409', () => {
    for (const pair of twin.duplicates) expect(pair.map((r) => r.status).sort()).toEqual([201, 409]);
  });

  it('counts every imported key as created by exactly one of the overlapping imports', () => {
    expect(twin.imported.map((r) => r.status)).toEqual(IMPORT_RANGES.map(() => 200));
    const created = twin.imported.reduce((n, r) => n + (r.body as { meta: { created: number } }).meta.created, 0);
    expect(created).toBe(IMPORTED_KEYS);
  });

  it('deletes a task once: one 204 and one 404', () => {
    for (const [i, group] of twin.edited.entries()) {
      if (i % 2 === 0) expect(group.slice(2).map((r) => r.status).sort()).toEqual([204, 404]);
      else expect(group.map((r) => r.status)).toEqual([200, 200]);
    }
  });

  it('ends in exactly the state one instance reaches', async () => {
    const [twinAlice, twinBob, singleAlice, singleBob] = await Promise.all([
      snapshot(twinWorld, twinWorld.alice),
      snapshot(twinWorld, twinWorld.bob),
      snapshot(singleWorld, singleWorld.alice),
      snapshot(singleWorld, singleWorld.bob),
    ]);
    expect(twinAlice).toEqual(singleAlice);
    expect(twinBob).toEqual(singleBob);
    // And that state is the intended one, not merely the same on both.
    expect(twinBob).toHaveLength(IMPORTED_KEYS);
    expect(new Set(twinBob.map((t) => t.source_id)).size).toBe(IMPORTED_KEYS);
    expect(twinAlice.filter((t) => t.source === 'manual')).toHaveLength(DUPLICATE_KEYS);
    const plain = twinAlice.filter((t) => t.source === null);
    // Odd tasks survive with both concurrent edits applied: no lost update.
    expect(plain).toHaveLength(PLAIN_TASKS / 2);
    expect(plain.every((t) => t.is_completed && /^edited \d*[13579]$/.test(t.context))).toBe(true);
  });

  it('never logs SQLITE_BUSY or an error', () => {
    const lines = worlds.flatMap((w) => w.servers.flatMap((s) => s.output));
    expect(lines.filter((l) => /SQLITE_BUSY|"level":(50|60)/.test(l))).toEqual([]);
  });
});
