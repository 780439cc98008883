import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dockerfileCommand } from '../../scripts/dockerfile.js';
import { SERVE_NODE_FLAGS } from '../../src/cli/cli.runtime.js';
import { ROOT, buildOnce } from '../helpers/server-process.js';

/*
 * `focus serve` is launched from four texts a user runs (the start and dev scripts, the
 * Dockerfile's CMD, the CLI's shebang for `focus serve` / `npx focus serve`); each must carry
 * the flags the server was measured with, and the CI's packed-install check starts the
 * Dockerfile's and the shebang's for real.
 */

const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

describe('the Node flags of `focus serve`', () => {
  it('the start script passes them to node', () => {
    const start = (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts.start;
    // It first checks that the build exists: one clear line instead of a stack when it does not.
    expect(start).toBe(`node scripts/build.js --check && exec node ${SERVE_NODE_FLAGS.join(' ')} dist/cli/focus.js serve`);
  });

  it('the dev script passes them to node through tsx', () => {
    const dev = (JSON.parse(read('package.json')) as { scripts: { dev: string } }).scripts.dev;
    expect(dev).toBe(`tsx watch ${SERVE_NODE_FLAGS.join(' ')} src/cli/focus.ts serve`);
  });

  it("the Dockerfile's CMD passes them to node", () => {
    expect(dockerfileCommand(read('Dockerfile'), /^CMD /)).toEqual(['node', ...SERVE_NODE_FLAGS, 'dist/cli/focus.js', 'serve']);
  });

  it("the CLI's shebang passes them to node, in the source and in the build", async () => {
    await buildOnce();
    const shebang = `#!/usr/bin/env -S node ${SERVE_NODE_FLAGS.join(' ')}`;
    expect(read('src/cli/focus.ts').split('\n')[0]).toBe(shebang);
    expect(read('dist/cli/focus.js').split('\n')[0]).toBe(shebang);
  }, 180_000);
});
