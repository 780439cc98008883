// The package's install-time build, for npm's lifecycle scripts (plain JavaScript: it must
// run where the TypeScript tooling is not installed).
//
//   node scripts/build.js --if-possible   `prepare`: after `npm install`/`npm ci` in a checkout.
//                                         With --omit=dev there is no compiler: say so, exit 0.
//   node scripts/build.js --clean         `prepack`: dist/ from scratch, so that no output of a
//                                         deleted source is packed.
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = new Set(process.argv.slice(2));

// Installed from a tarball (src/ is not packed): dist/ came built, and there is nothing to build from.
if (!existsSync(join(root, 'src'))) process.exit(0);

let tsc;
try {
  tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
} catch {
  if (!args.has('--if-possible')) throw new Error('typescript is not installed: run `npm ci` (with devDependencies) to build');
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
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
