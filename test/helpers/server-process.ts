import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { SERVE_NODE_FLAGS } from '../../src/cli/cli.runtime.js';

/*
 * The built `focus` command as an operator runs it: built once for all test workers,
 * started as a real process on a real port, or run as a one-shot admin command.
 * Used by vitest suites and by scripts/pg-restart-check.ts alike.
 */

export const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

/** The file package.json publishes as the `focus` command: what `npx focus` and `npm start` run. */
export const FOCUS_BIN = join(ROOT, (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: { focus: string } }).bin.focus);

// tsc rewrites only changed outputs, but always its build info after a build that saw changes.
const BUILD_INFO = join(ROOT, 'dist', '.tsbuildinfo');

/** Newest modification time of what goes into dist/: the sources, the web app's and the build configuration. */
function newestInput(): number {
  const sources = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('.test-helpers.ts'))
    .map((f) => join(ROOT, 'src', f));
  const web = readdirSync(join(ROOT, 'web'), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.(tsx?|css|html)$/.test(f))
    .map((f) => join(ROOT, 'web', f));
  return [...sources, ...web, join(ROOT, 'tsconfig.json'), join(ROOT, 'tsconfig.build.json')].reduce((newest, f) => Math.max(newest, statSync(f).mtimeMs), 0);
}

const isFresh = () => existsSync(FOCUS_BIN) && existsSync(BUILD_INFO) && statSync(BUILD_INFO).mtimeMs >= newestInput();

/**
 * `npm run build` unless dist/ is newer than every source (CI builds first). Test files
 * run in parallel workers, so builds are serialised by a lock directory: two tsc runs
 * writing the same dist/ files at once could hand a half-written file to a spawned process.
 */
export async function buildOnce(): Promise<void> {
  if (isFresh()) return;
  const lock = join(tmpdir(), `focus-build-lock-${createHash('sha256').update(ROOT).digest('hex').slice(0, 16)}`);
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      try {
        // Left behind by a killed run: no build takes three minutes.
        if (Date.now() - statSync(lock).mtimeMs > 180_000) rmSync(lock, { recursive: true, force: true });
      } catch {
        // Removed meanwhile: try again.
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  try {
    // Another worker may have built while this one waited for the lock.
    if (isFresh()) return;
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

/** Runs `npx focus …` from the repository root, as an operator would. */
export function focus(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  return exec('npx', ['--no-install', 'focus', ...args], env);
}

/**
 * Runs the same bin with node directly. npx costs 3–12 s per call here (npm 11 reads the
 * installed tree first), so only `focus --help` goes through it and every other call uses this.
 */
export function focusBin(env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  return exec(process.execPath, [FOCUS_BIN, ...args], env);
}

/** The bin with `input` on its stdin (a password, say), as `printf … | npx focus …` gives it. */
export function focusBinWithInput(env: Record<string, string>, input: string, ...args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [FOCUS_BIN, ...args], { cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'info', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** A set-up step through the CLI: must exit 0; returns its JSON result. */
export async function focusJson(env: Record<string, string>, ...args: string[]): Promise<unknown> {
  const result = await focusBin(env, ...args);
  if (result.code !== 0) throw new Error(`focus ${args.join(' ')} exited ${result.code}:\n${result.stderr}`);
  return JSON.parse(result.stdout);
}

/** The same bin, run from another directory (where the data is must not depend on it). */
export function focusIn(cwd: string, env: Record<string, string>, ...args: string[]): Promise<CliResult> {
  return exec(process.execPath, [FOCUS_BIN, ...args], env, cwd);
}

async function exec(file: string, args: string[], env: Record<string, string>, cwd = ROOT): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(file, args, {
      cwd,
      env: { ...process.env, LOG_LEVEL: 'info', ...env },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number | string; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

export type LogLine = Record<string, unknown> & { msg?: string; reqId?: string; level: number };

export interface ServerProcess {
  /** http://127.0.0.1:<port>, from the server's own "listening" line. */
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** Every complete, non-empty line written to stdout and stderr so far, in arrival order. */
  readonly output: string[];
  /** All of stdout so far: results only; a server writes none. */
  stdout(): string;
  /** All of stderr so far: the logs. */
  stderr(): string;
  /** Every complete stderr line, parsed; a line that is not JSON throws. */
  logs(): LogLine[];
  waitForLog(predicate: (line: LogLine) => boolean, what: string, timeoutMs?: number): Promise<LogLine>;
  /** True until the process has exited. */
  readonly running: boolean;
  /** Sends a signal (default SIGKILL) without waiting. */
  kill(signal?: NodeJS.Signals): void;
  /** Sends a signal (default SIGTERM) unless the process has ended, then waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<number | string>;
  /** Resolves with the exit code, or the signal name, once the process and its output have ended. */
  readonly exited: Promise<number | string>;
}

export interface StartOptions {
  /** `dist` (default) runs the built bin; `source` runs src/cli/focus.ts through tsx, no build needed. */
  from?: 'dist' | 'source';
  startTimeoutMs?: number;
}

/**
 * Starts `focus serve` as its own process and waits until it listens. Defaults: a free
 * port on 127.0.0.1 and LOG_LEVEL=info (the "listening" line tells the port); env wins.
 */
export async function startServer(env: Record<string, string>, options: StartOptions = {}): Promise<ServerProcess> {
  const from = options.from ?? 'dist';
  if (from === 'dist' && !existsSync(FOCUS_BIN)) throw new Error(`${FOCUS_BIN} is missing: call buildOnce() (or run \`npm run build\`) first`);
  const args = [...SERVE_NODE_FLAGS, ...(from === 'dist' ? [FOCUS_BIN, 'serve'] : ['--import', 'tsx', join(ROOT, 'src', 'cli', 'focus.ts'), 'serve'])];
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error(`could not spawn ${process.execPath} ${args.join(' ')}`);
  const pid = child.pid;

  let stdoutText = '';
  let stderrText = '';
  const output: string[] = [];
  let onLine: (line: string) => void = () => undefined;
  const collect = (stream: Readable | null, append: (text: string) => void) => {
    let partial = '';
    const push = (line: string) => {
      if (line === '') return;
      output.push(line);
      onLine(line);
    };
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      append(chunk);
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      lines.forEach(push);
    });
    stream?.on('end', () => push(partial));
  };
  collect(child.stdout, (text) => (stdoutText += text));
  collect(child.stderr, (text) => (stderrText += text));
  // 'close', not 'exit': by then stdout and stderr are drained, so the logs are complete.
  const exited = new Promise<number | string>((done) => child.once('close', (code, signal) => done(code ?? signal ?? -1)));

  const timeoutMs = options.startTimeoutMs ?? 30_000;
  const url = await new Promise<string>((ready, fail) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`server did not start within ${timeoutMs} ms:\n${output.join('\n')}`));
    }, timeoutMs);
    onLine = (line) => {
      const match = /Server listening at (http:\/\/[^\s"]+)/.exec(line);
      if (match?.[1] === undefined) return;
      clearTimeout(timer);
      onLine = () => undefined;
      ready(match[1]);
    };
    void exited.then((code) => {
      clearTimeout(timer);
      fail(new Error(`server exited (${code}) before listening:\n${output.join('\n')}`));
    });
  });

  const logs = (): LogLine[] => {
    const lines = stderrText.split('\n');
    lines.pop();
    return lines.map((line) => {
      try {
        return JSON.parse(line) as LogLine;
      } catch {
        throw new Error(`log line is not JSON: ${line}`);
      }
    });
  };

  return {
    url,
    port: Number(new URL(url).port),
    pid,
    output,
    stdout: () => stdoutText,
    stderr: () => stderrText,
    logs,
    async waitForLog(predicate, what, waitMs = 45_000) {
      // A loop, not vi.waitFor: scripts/pg-restart-check.ts runs this file outside Vitest.
      const deadline = Date.now() + waitMs;
      for (;;) {
        const found = logs().find(predicate);
        if (found !== undefined) return found;
        if (Date.now() > deadline) throw new Error(`no log line for ${what}; stderr:\n${stderrText}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    get running() {
      return child.exitCode === null && child.signalCode === null;
    },
    kill(signal = 'SIGKILL') {
      child.kill(signal);
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
    exited,
  };
}
