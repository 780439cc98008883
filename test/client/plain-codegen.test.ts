import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, type TestDatabase, createTestDatabase } from '../helpers/harness.js';
import { ROOT, type ServerProcess, buildOnce, focusJson, startServer } from '../helpers/server-process.js';

/*
 * Contract section 14, "Plain code generation": `npx openapi-typescript <document>` with
 * no options, pointed at a real server's document, gives types a client uses as is. A
 * program that sends only what the document requires (seed-minimal.program.ts) compiles
 * with tsc, strict, against them and runs against that server.
 */

const run = promisify(execFile);
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const OPENAPI_TS = join(ROOT, 'node_modules', 'openapi-typescript', 'bin', 'cli.js');
const PROGRAM = join(ROOT, 'test', 'client', 'seed-minimal.program.ts');

async function attempt(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(file, args, { cwd, env, timeout: 120_000 });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

for (const dialect of DIALECTS) {
  describe(`plain openapi-typescript against the served document [${dialect}]`, () => {
    let database: TestDatabase;
    let server: ServerProcess;
    let token: string;
    let project: string;
    let schema: string;
    let compiled: { code: number; output: string };

    beforeAll(async () => {
      await buildOnce();
      database = await createTestDatabase(dialect);
      const env = { DATABASE_URL: database.url };
      await focusJson(env, 'users', 'add', 'alice', '--org', '1');
      token = ((await focusJson(env, 'tokens', 'issue', 'alice', '--name', 'codegen')) as { token: string }).token;
      server = await startServer({ ...env, RATE_LIMIT: '0', WEBHOOK_ALLOW_PRIVATE: '1' });

      project = mkdtempSync(join(tmpdir(), 'focus-codegen-'));
      // Exactly what the README tells an integrator to run: no options.
      const generated = await attempt(process.execPath, [OPENAPI_TS, `${server.url}/api/v1/openapi.json`, '-o', 'schema.d.ts'], project);
      expect(generated.code, generated.output).toBe(0);
      schema = readFileSync(join(project, 'schema.d.ts'), 'utf8');
      const program = readFileSync(PROGRAM, 'utf8');
      if (!program.includes("'../../clients/typescript/schema.js'")) throw new Error('seed-minimal.program.ts must import ../../clients/typescript/schema.js');
      writeFileSync(join(project, 'program.ts'), program.replaceAll("'../../clients/typescript/schema.js'", "'./schema.js'"));
      writeFileSync(join(project, 'package.json'), JSON.stringify({ type: 'module', private: true }));
      symlinkSync(join(ROOT, 'node_modules'), join(project, 'node_modules'), 'dir');
      writeFileSync(
        join(project, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: { target: 'ES2022', lib: ['ES2023', 'DOM'], module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: true, types: ['node'], outDir: 'dist', noEmitOnError: true },
          files: ['program.ts'],
        }),
      );
      compiled = await attempt(process.execPath, [TSC, '-p', project], project);
    }, 240_000);

    afterAll(async () => {
      await server?.stop();
      await database?.drop();
      if (project !== undefined) rmSync(project, { recursive: true, force: true });
    });

    it('types no property `unknown`', () => {
      const unknownProperties = schema.split('\n').filter((line) => /^\s*(?:readonly\s+)?["\w-]+\??: unknown;/.test(line));
      expect(unknownProperties).toEqual([]);
    });

    it('compiles a program that sends only the required fields', () => {
      expect(compiled.output).toBe('');
      expect(compiled.code).toBe(0);
    });

    it('runs that program against the server: every minimal body is accepted', async () => {
      expect(compiled.code, compiled.output).toBe(0);
      const ran = await attempt(process.execPath, [join(project, 'dist', 'program.js')], project, {
        ...process.env,
        FOCUS_URL: server.url,
        FOCUS_TOKEN: token,
        HOOK_URL: 'http://127.0.0.1:9/hook',
      });
      expect(ran.code, ran.output).toBe(0);
      expect(ran.output.trim().split('\n')).toEqual([
        'session 201',
        'session record 1:waiting:false',
        'session update 200',
        'task 201',
        'task update 200',
        'import 200',
        'me 200',
        'calendar feed 201',
        'webhook 201',
      ]);
    }, 60_000);
  });
}
