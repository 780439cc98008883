import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
export const CLI = join(ROOT, 'dist', 'cli', 'focus.js');

/** Newest modification time of the sources that go into dist/. */
function newestSource(): number {
  return readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('.test-helpers.ts'))
    .reduce((newest, f) => Math.max(newest, statSync(join(ROOT, 'src', f)).mtimeMs), 0);
}

// tsc rewrites only changed outputs, but always its build info after a build that saw changes.
const BUILD_INFO = join(ROOT, 'dist', '.tsbuildinfo');
const isFresh = () => existsSync(CLI) && existsSync(BUILD_INFO) && statSync(BUILD_INFO).mtimeMs >= newestSource();

/**
 * Runs `npm run build` unless dist/ is newer than every source (CI builds first).
 * A lock directory keeps two test workers from building at once.
 */
export async function ensureBuilt(): Promise<void> {
  if (isFresh()) return;
  const lock = join(ROOT, 'node_modules', '.focus-test-build.lock');
  for (let waited = 0; ; waited += 200) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // A lock older than two minutes was left by a killed run.
      if (waited > 120_000 || Date.now() - statSync(lock).mtimeMs > 120_000) {
        rmdirSync(lock);
        continue;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  if (isFresh()) {
    rmdirSync(lock);
    return;
  }
  try {
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'pipe' });
  } catch (error) {
    // Type errors still emit JavaScript; only a missing CLI is fatal.
    if (!existsSync(CLI)) throw error;
    process.stderr.write(`fault tests: npm run build reported errors; using the emitted dist/:\n${String((error as { stdout?: Buffer }).stdout ?? '')}\n`);
  } finally {
    rmdirSync(lock);
  }
}

export interface ServerProcess {
  child: ChildProcess;
  port: number;
  base: string;
  output(): string;
  /** Resolves with the exit code (or signal name) once the process has ended. */
  exited: Promise<number | string>;
}

/** Spawns `node dist/cli/focus.js serve` (or another command) on a free port and waits until it listens. */
export function startServer(env: Record<string, string>, args: string[] = [CLI, 'serve']): Promise<ServerProcess> {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start within 30 s:\n${out}`));
    }, 30_000);
    const poll = setInterval(() => {
      const match = /listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (match === null) return;
      clearInterval(poll);
      clearTimeout(timer);
      const port = Number(match[1]);
      resolve({ child, port, base: `http://127.0.0.1:${port}`, output: () => out, exited });
    }, 25);
    void exited.then((code) => {
      clearInterval(poll);
      clearTimeout(timer);
      reject(new Error(`server exited (${code}) before listening:\n${out}`));
    });
  });
}

/** Runs the admin CLI and returns its JSON result. */
export function cli(env: Record<string, string>, ...args: string[]): unknown {
  const stdout = execFileSync(process.execPath, [CLI, ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  return JSON.parse(stdout.toString());
}
