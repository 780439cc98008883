// The package's build (`npm run build`, and `prepack` before `npm pack`): index.ts compiled
// to dist/ with its declarations, and the generated schema.d.ts beside them (tsc does not
// copy declaration files). Plain JavaScript, run from the Focus repository, whose
// node_modules holds TypeScript.
import { spawnSync } from 'node:child_process';
import { copyFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const tsc = createRequire(join(here, 'package.json')).resolve('typescript/bin/tsc');
rmSync(join(here, 'dist'), { recursive: true, force: true });
const { status } = spawnSync(process.execPath, [tsc, '-p', join(here, 'tsconfig.json')], { stdio: 'inherit', cwd: here });
if (status !== 0) process.exit(status ?? 1);
copyFileSync(join(here, 'schema.d.ts'), join(here, 'dist', 'schema.d.ts'));
