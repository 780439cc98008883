import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_DIR, CLIENT_SCHEMA, renderClientSchema } from '../../scripts/client-generate.js';
import { DIALECTS, type TestDatabase, createTestDatabase } from '../helpers/harness.js';
import { ROOT, type ServerProcess, buildOnce, focusJson, startServer } from '../helpers/server-process.js';

/*
 * The typed client package (clients/typescript) as an integrator gets it: its types are
 * those of the document the server publishes and its version is the server's; `npm pack`
 * builds it, and the tarball installed in a scratch project (offline: its dependencies
 * packed from this repository's node_modules) compiles the README's walk-through and
 * test/client's type checks with tsc (strict; a type error fails), and the walk-through
 * runs against a real server process on each database.
 */

const run = promisify(execFile);
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const README = join(CLIENT_DIR, 'README.md');
const CLIENT_PACKAGE = JSON.parse(readFileSync(join(CLIENT_DIR, 'package.json'), 'utf8')) as { name: string; version: string; dependencies: Record<string, string> };

/** The README's walk-through: the TypeScript block under "## Walk-through". */
function walkthrough(): { code: string; output: string } {
  const readme = readFileSync(README, 'utf8');
  const match = /## Walk-through\n[\s\S]*?```ts\n([\s\S]*?)```[\s\S]*?```text\n([\s\S]*?)```/.exec(readme);
  if (match === null) throw new Error(`${README} has no walk-through (a ts block, then a text block of its output)`);
  return { code: match[1] as string, output: match[2] as string };
}

const npm = async (args: string[], cwd: string) => (await run('npm', [...args, '--no-audit', '--no-fund'], { cwd, timeout: 180_000 })).stdout.trim();

/** The project an integrator would have: the packed client installed from its tarball, the walk-through beside it. */
async function integratorProject(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'focus-client-'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  // The client's dependencies (and theirs) come from this repository's node_modules: no registry.
  const tarballs = [];
  for (const dependency of ['openapi-fetch', 'openapi-typescript-helpers']) tarballs.push(await npm(['pack', join(ROOT, 'node_modules', dependency), '--pack-destination', dir], dir));
  tarballs.push((await npm(['pack', CLIENT_DIR, '--pack-destination', dir], dir)).split('\n').pop() ?? '');
  await npm(['install', '--offline', ...tarballs.map((file) => `./${file}`)], dir);
  if (!walkthrough().code.includes(`from '${CLIENT_PACKAGE.name}'`)) throw new Error(`the walk-through must import ${CLIENT_PACKAGE.name}`);
  writeFileSync(join(dir, 'walkthrough.ts'), walkthrough().code);
  const checks = readFileSync(join(ROOT, 'test', 'client', 'client.type-checks.ts'), 'utf8');
  if (!checks.includes("'../../clients/typescript/index.js'")) throw new Error('client.type-checks.ts must import ../../clients/typescript/index.js');
  writeFileSync(join(dir, 'type-checks.ts'), checks.replaceAll("'../../clients/typescript/index.js'", `'${CLIENT_PACKAGE.name}'`));
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        lib: ['ES2023'],
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noUncheckedIndexedAccess: true,
        // Node's types as installed in this repository (the scratch project has only the client).
        typeRoots: [join(ROOT, 'node_modules', '@types')],
        types: ['node'],
        outDir: 'dist',
        noEmitOnError: true,
      },
      files: ['walkthrough.ts', 'type-checks.ts'],
    }),
  );
  return dir;
}

describe('the typed client package in clients/typescript', () => {
  let project: string;
  let compiled: { code: number; output: string };

  beforeAll(async () => {
    project = await integratorProject();
    try {
      const { stdout, stderr } = await run(process.execPath, [TSC, '-p', project], { cwd: project, timeout: 120_000 });
      compiled = { code: 0, output: stdout + stderr };
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string };
      compiled = { code: typeof e.code === 'number' ? e.code : -1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
    }
  }, 300_000);

  afterAll(() => {
    if (project !== undefined) rmSync(project, { recursive: true, force: true });
  });

  it('ships the types of the document the server publishes (npm run client:generate)', async () => {
    const { openapiDocument } = await import('../../scripts/openapi-document.js');
    const current = await renderClientSchema(await openapiDocument());
    expect(readFileSync(CLIENT_SCHEMA, 'utf8') === current, 'clients/typescript/schema.d.ts is out of date: run npm run client:generate').toBe(true);
  });

  it('is versioned with the server and installs only openapi-fetch', () => {
    const server = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(CLIENT_PACKAGE.version).toBe(server.version);
    expect(Object.keys(CLIENT_PACKAGE.dependencies)).toEqual(['openapi-fetch']);
    const installed = readdirSync(join(project, 'node_modules', CLIENT_PACKAGE.name, 'dist')).sort();
    expect(installed).toEqual(['index.d.ts', 'index.js', 'schema.d.ts']);
  });

  it('compiles the README walk-through and the type checks with tsc, strict', () => {
    expect(compiled.output).toBe('');
    expect(compiled.code).toBe(0);
  });

  for (const dialect of DIALECTS) {
    describe(`walk-through against a real server [${dialect}]`, () => {
      let database: TestDatabase;
      let server: ServerProcess;
      let token: string;

      beforeAll(async () => {
        await buildOnce();
        database = await createTestDatabase(dialect);
        const env = { DATABASE_URL: database.url };
        await focusJson(env, 'users', 'add', 'alice', '--org', '1');
        token = ((await focusJson(env, 'tokens', 'issue', 'alice', '--name', 'typed client')) as { token: string }).token;
        server = await startServer({ ...env, RATE_LIMIT: '0' });
      }, 180_000);

      afterAll(async () => {
        await server?.stop();
        await database?.drop();
      });

      it('prints what the README says, and leaves the data it describes', async () => {
        expect(compiled.code, compiled.output).toBe(0);
        const { stdout } = await run(process.execPath, [join(project, 'dist', 'walkthrough.js')], {
          cwd: project,
          env: { ...process.env, FOCUS_URL: server.url, FOCUS_TOKEN: token },
          timeout: 60_000,
        });
        expect(stdout).toBe(walkthrough().output);

        const res = await fetch(`${server.url}/api/v1/tasks?session_id=1`, { headers: { authorization: `Bearer ${token}` } });
        const body = (await res.json()) as { data: { context: string; source: string | null; source_id: number | string | null; is_completed: boolean }[] };
        expect(body.data.map((t) => [t.context, t.source, t.source_id, t.is_completed])).toEqual([
          ['Outline the quarterly report', null, null, true],
          ['Fix the login redirect loop (again)', 'linear', 'ENG-4711', false],
          ['Renew the domain', 'todoist', 7436512, false],
        ]);
      }, 90_000);
    });
  }
});
