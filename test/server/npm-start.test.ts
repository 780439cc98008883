import { execFile, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestDatabase, createTestDatabase } from '../helpers/harness.js';
import { ROOT, buildOnce } from '../helpers/server-process.js';

/*
 * `npm start` as docs/deployment.md runs it: npm in front of the server. A signal sent to
 * the npm process must reach the server, which drains and exits, leaving nothing behind
 * that still answers; and npm start runs what was built, compiling nothing.
 */

beforeAll(buildOnce, 180_000);

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('npm start', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
  });
  afterAll(async () => {
    await database?.drop();
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`serves the built code and stops the server when npm gets ${signal}`, async () => {
      const npm = spawn('npm', ['start'], {
        cwd: ROOT,
        env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', RATE_LIMIT: '0', DATABASE_URL: database.url },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      npm.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
      npm.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
      // 'exit', not 'close': an orphaned server would keep the pipes open for ever.
      const npmExited = new Promise<number | string>((done) => npm.once('exit', (code, sig) => done(code ?? sig ?? -1)));
      let serverPid: number | undefined;
      try {
        const started = await new Promise<{ pid: number; address: string }>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`npm start did not serve within 30 s:\n${stdout}${stderr}`)), 30_000);
          const check = () => {
            const line = stderr.split('\n').find((l) => l.includes('"focus serving'));
            if (line === undefined) return;
            clearTimeout(timer);
            resolve(JSON.parse(line) as { pid: number; address: string });
          };
          npm.stderr.on('data', check);
          void npmExited.then(() => reject(new Error(`npm start exited:\n${stdout}${stderr}`)));
        });
        serverPid = started.pid;
        expect(serverPid).not.toBe(npm.pid);
        expect((await fetch(`${started.address}/readyz`)).status).toBe(200);
        // npm ran the built file and no script before it (no compile step).
        expect(stdout).toMatch(/^> .*node (--\S+ )*dist\/cli\/focus\.js serve$/m);
        expect(stdout.match(/^> focus@/gm)).toHaveLength(1);

        npm.kill(signal);
        const gone = await Promise.race([npmExited.then(() => true), new Promise((r) => setTimeout(() => r(false), 15_000))]);
        expect(gone, 'npm did not exit within 15 s').toBe(true);
        for (let i = 0; i < 100 && alive(serverPid); i++) await new Promise((r) => setTimeout(r, 50));
        expect(alive(serverPid), `server ${serverPid} still running after npm exited`).toBe(false);
        await expect(fetch(`${started.address}/healthz`)).rejects.toThrow();
        expect(stderr).toContain(`"signal":"${signal}"`);
        expect(stderr).toContain('"msg":"shut down cleanly"');
      } finally {
        npm.kill('SIGKILL');
        if (serverPid !== undefined && alive(serverPid)) process.kill(serverPid, 'SIGKILL');
      }
    }, 60_000);
  }
});

describe('npm start in a clone that was never built (npm install --omit=dev: no compiler, no dist/)', () => {
  it('dies with one clear line, not a MODULE_NOT_FOUND stack', async () => {
    const clone = mkdtempSync(join(tmpdir(), 'focus-unbuilt-'));
    try {
      mkdirSync(join(clone, 'scripts'));
      for (const file of ['package.json', 'scripts/build.js']) copyFileSync(join(ROOT, file), join(clone, file));
      const failed = await promisify(execFile)('npm', ['start', '--silent'], { cwd: clone, timeout: 30_000 }).then(
        () => ({ code: 0, stderr: '' }),
        (error: { code?: number; stderr?: string }) => ({ code: error.code, stderr: error.stderr ?? '' }),
      );
      expect(failed.code).toBe(1);
      expect(failed.stderr).not.toMatch(/MODULE_NOT_FOUND|node:internal|^\s+at /m);
      expect(failed.stderr.trim()).toBe(
        'focus: the server is not built (dist/ is missing): run `npm ci && npm run build` (with devDependencies), or install the packed tarball',
      );
    } finally {
      rmSync(clone, { recursive: true, force: true });
    }
  }, 60_000);
});
