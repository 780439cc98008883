import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

export const ROOT = resolve(import.meta.dirname, '../..');
export const run = promisify(execFile);

/**
 * `npm run build` for suites that spawn the built CLI. Test files run in parallel
 * workers, so builds are serialised by a lock directory: two tsc runs writing the
 * same dist/ files at once could hand a half-written file to a spawned process.
 */
export async function buildOnce(): Promise<void> {
  const lock = join(tmpdir(), `focus-build-lock-${Buffer.from(ROOT).toString('base64url').slice(-24)}`);
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      try {
        if (Date.now() - statSync(lock).mtimeMs > 180_000) rmSync(lock, { recursive: true, force: true });
      } catch {
        // Removed meanwhile: try again.
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  try {
    await run('npm', ['run', 'build'], { cwd: ROOT });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    // tsc still emits on type errors; those are `npm run typecheck`'s to report, and
    // these suites test the emitted CLI. Anything else (tsc missing, a crash) fails.
    const typeErrorsOnly = /error TS\d+:/.test(stdout) && existsSync(FOCUS_BIN);
    if (!typeErrorsOnly) throw new Error(`npm run build failed:\n${stdout}${stderr}`, { cause: error });
    process.stderr.write(`warning: npm run build reported type errors; testing the emitted JavaScript\n${stdout}`);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The file package.json publishes as the `focus` command: what `npx focus` runs. */
export const FOCUS_BIN = join(ROOT, (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: { focus: string } }).bin.focus);

/** Runs `npx focus …` from the repository root, as an operator would. */
export function focus(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  return exec('npx', ['--no-install', 'focus', ...args], env);
}

/**
 * Runs the same bin with node directly. npx costs a second of CPU per call, so the
 * long error matrices use this; the headline commands go through npx.
 */
export function focusBin(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  return exec(process.execPath, [FOCUS_BIN, ...args], env);
}

async function exec(file: string, args: string[], env: Record<string, string>): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(file, args, {
      cwd: ROOT,
      env: { ...process.env, LOG_LEVEL: 'info', ...env },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number | string; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}
