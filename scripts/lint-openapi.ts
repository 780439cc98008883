/*
 * Lints the OpenAPI document the server publishes with Spectral's `spectral:oas` ruleset
 * (.spectral.yaml). Any finding fails, warnings and hints included.
 *
 *   npm run lint:openapi
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../src/config/config.variables.js';
import { openapiDocument } from './openapi-document.js';

const dir = mkdtempSync(join(tmpdir(), 'focus-openapi-'));
try {
  const file = join(dir, 'openapi.json');
  writeFileSync(file, `${JSON.stringify(await openapiDocument(), null, 2)}\n`);
  const spectral = join(PACKAGE_ROOT, 'node_modules', '.bin', 'spectral');
  const result = spawnSync(spectral, ['lint', file, '--ruleset', join(PACKAGE_ROOT, '.spectral.yaml'), '--fail-severity', 'hint'], { stdio: 'inherit' });
  if (result.error !== undefined) throw result.error;
  process.exitCode = result.status ?? 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
