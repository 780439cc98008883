// The package's build, plain JavaScript: it must run where the TypeScript tooling is not
// installed, from npm's lifecycle scripts.
//
//   node scripts/build.js                 `npm run build`: compile src/ to dist/.
//   node scripts/build.js --if-possible   `prepare`: after `npm install`/`npm ci` in a checkout.
//                                         With --omit=dev there is no compiler: say so, exit 0.
//   node scripts/build.js --clean         `prepack`: dist/ from scratch, so that no output of a
//                                         deleted source is packed.
//   node scripts/build.js --check         `npm start`: one clear line, not a MODULE_NOT_FOUND
//                                         stack, when dist/ is missing (a clone installed with --omit=dev).
//
// Each build marks the package's bin files executable: tsc writes plain files, and
// `npx focus` runs the bin directly. After the server, Vite builds the web app (web/) into
// dist/web, which the server serves at `/`: built at install, nothing fetched at run time.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = new Set(process.argv.slice(2));

if (args.has('--check')) {
  const { bin = {} } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  if (Object.values(bin).every((file) => existsSync(join(root, file)))) process.exit(0);
  process.stderr.write(
    'focus: the server is not built (dist/ is missing): run `npm ci && npm run build` (with devDependencies), or install the packed tarball\n',
  );
  process.exit(1);
}

// Installed from a tarball (src/ is not packed): dist/ came built, and there is nothing to build from.
if (!existsSync(join(root, 'src'))) process.exit(0);

let tsc;
try {
  tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
} catch {
  if (!args.has('--if-possible')) {
    process.stderr.write('focus: typescript is not installed: run `npm ci` (with devDependencies) to build\n');
    process.exit(1);
  }
  const built = existsSync(join(root, 'dist', 'cli', 'focus.js'));
  process.stderr.write(
    built
      ? 'focus: typescript is not installed (--omit=dev); serving the dist/ already built\n'
      : 'focus: typescript is not installed (--omit=dev), so dist/ was not built. Build where devDependencies are ' +
          'installed (`npm ci && npm pack`) and install the tarball: `npm install --global --omit=dev focus-<version>.tgz`\n',
  );
  process.exit(0);
}

if (args.has('--clean')) rmSync(join(root, 'dist'), { recursive: true, force: true });
// tsc emits even with type errors (`npm run typecheck` reports those); its status is ours.
const { status } = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
// Type errors still emit (see above), so the web app is built whatever tsc's status.
const web = buildWebApp();
const { bin = {} } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
for (const file of Object.values(bin)) {
  if (existsSync(join(root, file))) chmodSync(join(root, file), 0o755);
}
process.exit(status === 0 ? web : (status ?? 1));

/** `vite build web`: its status, or 1 when Vite is missing beside a TypeScript compiler (a broken install). */
function buildWebApp() {
  let vite;
  try {
    // Vite's exports map hides its bin; its package.json is exported.
    vite = join(dirname(createRequire(join(root, 'package.json')).resolve('vite/package.json')), 'bin', 'vite.js');
  } catch {
    process.stderr.write('focus: vite is not installed: run `npm ci` (with devDependencies) to build the web app\n');
    return 1;
  }
  const result = spawnSync(process.execPath, [vite, 'build', '--config', join(root, 'web', 'vite.config.ts'), '--logLevel', 'warn'], { stdio: 'inherit', cwd: root });
  return result.status ?? 1;
}
