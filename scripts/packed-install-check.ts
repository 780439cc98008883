/*
 * CI: the production path, as an operator takes it (`.ci/run` runs this after the suite:
 * `npm pack` rebuilds dist/ from scratch, which must not happen under running tests).
 *
 *   1. A fresh `npm ci` of the lockfile warns about no engine (no EBADENGINE).
 *   2. `npm pack`, unpacked, `npm ci --omit=dev` inside (the Dockerfile's commands, read from
 *      it), then its CMD and HEALTHCHECK: the server answers /readyz, a token issued with the
 *      package's own CLI works, SIGTERM exits 0.
 *   3. The same tarball installed globally with --omit=dev (how Node services are installed):
 *      `focus --version`, `focus migrate` (prints the absolute database path), `focus serve`
 *      answering /readyz, and a refusal to keep data inside node_modules.
 *
 *   node --import tsx scripts/packed-install-check.ts
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { dockerfileCommand } from './dockerfile.js';

const ROOT = join(import.meta.dirname, '..');
const run = promisify(execFile);
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

const failures: string[] = [];
function check(ok: boolean, what: string, detail = ''): void {
  process.stdout.write(`  ${ok ? 'ok  ' : 'FAIL'} ${what}\n`);
  if (!ok) failures.push(`${what}${detail === '' ? '' : `\n${detail}`}`);
}

async function sh(file: string, args: string[], options: { cwd: string; env?: Record<string, string> }) {
  try {
    const { stdout, stderr } = await run(file, args, { ...options, env: { ...process.env, ...options.env }, maxBuffer: 64 << 20 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

interface Served {
  child: ChildProcess;
  base: string;
  stderr: () => string;
  exited: Promise<number | string>;
}

async function serve(file: string, args: string[], cwd: string, env: Record<string, string>): Promise<Served> {
  const child = spawn(file, args, { cwd, env: { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  child.stdout?.resume();
  const exited = new Promise<number | string>((done) => child.once('exit', (code, signal) => done(code ?? signal ?? -1)));
  const deadline = Date.now() + 30_000;
  for (;;) {
    const match = /Server listening at (http:\/\/[^\s"]+)/.exec(stderr);
    if (match?.[1] !== undefined) return { child, base: match[1], stderr: () => stderr, exited };
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${file} ${args.join(' ')} did not serve:\n${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function stop(served: Served, what: string): Promise<void> {
  served.child.kill('SIGTERM');
  const code = await Promise.race([served.exited, new Promise((r) => setTimeout(() => r('timeout'), 15_000))]);
  check(code === 0, `${what}: SIGTERM drains and exits 0`, `exit: ${String(code)}\n${served.stderr().slice(-2000)}`);
  if (code === 'timeout') served.child.kill('SIGKILL');
}

const devOnly = ['typescript', 'vitest', 'tsx', 'playwright-core', 'eslint'];

/**
 * better-sqlite3's installer downloads a prebuilt binary, else compiles SQLite: ~2.5 min on two
 * cores, for each of the two installs below, where GitHub is out of reach. It first looks in npm's
 * cache of prebuilt binaries, where the binary this checkout's `npm ci` built (same version, same
 * Node) is put, under the name the installer itself says it looks for. Without it, it compiles.
 */
async function cacheSqliteBinary(): Promise<void> {
  const pkg = join(ROOT, 'node_modules', 'better-sqlite3');
  const installer = join(ROOT, 'node_modules', '.bin', 'prebuild-install');
  if (!existsSync(join(pkg, 'build', 'Release', 'better_sqlite3.node')) || !existsSync(installer)) return;
  const cache = (await sh('npm', ['config', 'get', 'cache'], { cwd: ROOT })).stdout.trim();
  const probe = await sh(installer, ['--verbose'], { cwd: pkg, env: { npm_config_cache: cache } });
  const cached = /looking for cached prebuild @ (\S+\.tar\.gz)/.exec(probe.stdout + probe.stderr)?.[1];
  if (cached === undefined || existsSync(cached)) return;
  mkdirSync(dirname(cached), { recursive: true });
  await sh('tar', ['-czf', cached, '-C', pkg, 'build/Release/better_sqlite3.node'], { cwd: ROOT });
}

async function main(): Promise<number> {
  const work = mkdtempSync(join(tmpdir(), 'focus-packed-'));
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  try {
    process.stdout.write('packed-install-check: a fresh npm ci\n');
    const fresh = join(work, 'fresh');
    mkdirSync(fresh);
    for (const f of ['package.json', 'package-lock.json']) {
      await sh('cp', [join(ROOT, f), fresh], { cwd: ROOT });
    }
    // Scripts off: this is about what npm resolves and warns, not about compiling it again.
    const ci = await sh('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: fresh });
    check(ci.code === 0, 'npm ci succeeds', ci.stderr);
    check(!/EBADENGINE/.test(ci.stdout + ci.stderr), 'npm ci prints no EBADENGINE', ci.stderr);
    rmSync(fresh, { recursive: true, force: true });

    process.stdout.write('packed-install-check: npm pack\n');
    for (const command of ['RUN npm ci --no-audit --no-fund', 'RUN npm pack --pack-destination /pkg', 'RUN npm ci --omit=dev --no-audit --no-fund']) {
      check(dockerfile.includes(command), `Dockerfile runs \`${command.slice(4)}\``);
    }
    const manifestBefore = readFileSync(join(ROOT, 'package.json'), 'utf8');
    const packed = await sh('npm', ['pack', '--pack-destination', work], { cwd: ROOT });
    const tarball = join(work, `focus-${VERSION}.tgz`);
    check(packed.code === 0 && existsSync(tarball), 'npm pack builds a tarball', packed.stderr);
    const listing = (await sh('tar', ['-tzf', tarball], { cwd: work })).stdout.split('\n');
    check(listing.includes('package/dist/cli/focus.js'), 'the tarball holds the built CLI');
    check(listing.includes('package/dist/web/index.html'), 'the tarball holds the built web app');
    check(listing.includes('package/npm-shrinkwrap.json'), 'the tarball holds the lockfile (npm-shrinkwrap.json)');
    check(!listing.some((f) => f.startsWith('package/src/') || f.startsWith('package/test/')), 'the tarball holds no sources or tests');
    check(!existsSync(join(ROOT, 'npm-shrinkwrap.json')), 'npm pack leaves no npm-shrinkwrap.json behind');
    const packedScripts = Object.keys((JSON.parse((await sh('tar', ['-xzOf', tarball, 'package/package.json'], { cwd: work })).stdout) as { scripts?: object }).scripts ?? {});
    check(!packedScripts.some((s) => ['preinstall', 'install', 'postinstall', 'prepare'].includes(s)), 'the packed package.json has no install-time script', packedScripts.join(', '));
    check(readFileSync(join(ROOT, 'package.json'), 'utf8') === manifestBefore, 'npm pack leaves the checkout’s package.json as it was');
    // prepack rebuilt dist/ from scratch: the checkout's own `npx focus` must still run it.
    const own = await sh('npx', ['--no-install', 'focus', '--version'], { cwd: ROOT });
    check(own.stdout === `${VERSION}\n`, 'npx focus still runs in the checkout after npm pack', own.stderr);

    process.stdout.write('packed-install-check: the Dockerfile path (unpacked, npm ci --omit=dev)\n');
    await cacheSqliteBinary();
    await sh('tar', ['-xzf', tarball, '-C', work], { cwd: work });
    const app = join(work, 'package');
    const install = await sh('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund'], { cwd: app });
    check(install.code === 0, 'npm ci --omit=dev succeeds in the unpacked package', install.stdout + install.stderr);
    check(!/EBADENGINE/.test(install.stdout + install.stderr), 'npm ci --omit=dev prints no EBADENGINE', install.stderr);
    const modules = readdirSync(join(app, 'node_modules'));
    check(!devOnly.some((m) => modules.includes(m)), 'no devDependency is installed');

    const data = join(work, 'app-data');
    mkdirSync(data);
    const port = String(await freePort());
    const env = { DATABASE_URL: `sqlite:${join(data, 'focus.db')}`, PORT: port };
    const [cmd, ...cmdArgs] = dockerfileCommand(dockerfile, /^CMD /);
    const server = await serve(cmd ?? 'node', cmdArgs, app, env);
    const [hcFile, ...hcArgs] = dockerfileCommand(dockerfile, /^HEALTHCHECK /);
    const health = await sh(hcFile ?? 'node', hcArgs, { cwd: app, env });
    check(health.code === 0, "the Dockerfile's HEALTHCHECK passes", health.stderr);
    const version = await sh('npx', ['--no-install', 'focus', '--version'], { cwd: app, env });
    check(version.stdout === `${VERSION}\n`, 'npx focus --version in the installed package', version.stdout + version.stderr);
    await sh('npx', ['--no-install', 'focus', 'users', 'add', 'alice', '--org', '1'], { cwd: app, env });
    const issued = await sh('npx', ['--no-install', 'focus', 'tokens', 'issue', 'alice'], { cwd: app, env });
    const token = issued.code === 0 ? (JSON.parse(issued.stdout) as { token: string }).token : '';
    const me = await fetch(`${server.base}/api/v1/me`, { headers: { authorization: `Bearer ${token}` } });
    check(me.status === 200, 'a token from the installed CLI works against the installed server', issued.stderr);
    await stop(server, 'the installed server');
    const healthAfter = await sh(hcFile ?? 'node', hcArgs, { cwd: app, env });
    check(healthAfter.code !== 0, 'the HEALTHCHECK fails once the server is gone');

    process.stdout.write('packed-install-check: npm install --global --omit=dev\n');
    const prefix = join(work, 'global');
    const global = await sh(
      'npm',
      ['install', '--global', '--prefix', prefix, '--omit=dev', '--allow-scripts=better-sqlite3', '--no-audit', '--no-fund', tarball],
      { cwd: work },
    );
    check(global.code === 0, 'npm install --global --omit=dev <tarball> succeeds', global.stdout + global.stderr);
    check(!/npm warn install-scripts/i.test(global.stdout + global.stderr), 'npm install --global <tarball> warns about no install script of its own', global.stderr);
    const bin = join(prefix, 'bin', 'focus');
    const globalModules = readdirSync(join(prefix, 'lib', 'node_modules', 'focus', 'node_modules'));
    check(!devOnly.some((m) => globalModules.includes(m)), 'no devDependency is installed globally');
    const globalVersion = await sh(bin, ['--version'], { cwd: work });
    check(globalVersion.stdout === `${VERSION}\n`, 'focus --version', globalVersion.stderr);
    const file = join(data, 'global.db');
    const migrated = await sh(bin, ['migrate'], { cwd: '/', env: { DATABASE_URL: `sqlite:${file}` } });
    check(migrated.code === 0 && (JSON.parse(migrated.stdout || '{}') as { database?: string }).database === `sqlite:${file}`,
      'focus migrate prints the absolute database path', migrated.stdout + migrated.stderr);
    const inside = await sh(bin, ['migrate'], { cwd: work, env: { DATABASE_URL: '' } });
    check(inside.code === 2 && /^focus: invalid configuration: DATABASE_URL/.test(inside.stderr) && inside.stdout === '',
      'an installed package refuses a relative database path (no data inside node_modules)', inside.stderr);
    const globalServer = await serve(bin, ['serve'], '/', { DATABASE_URL: `sqlite:${file}`, PORT: '0' });
    const ready = await fetch(`${globalServer.base}/readyz`);
    check(ready.status === 200, 'focus serve (global install) answers /readyz');
    await stop(globalServer, 'the globally installed server');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  process.stdout.write(`packed-install-check: ${failures.length === 0 ? 'passed' : `${failures.length} FAILED`}\n`);
  for (const f of failures) process.stdout.write(`\n${f}\n`);
  return failures.length === 0 ? 0 : 1;
}

process.exit(await main());
