import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from './config.variables.js';

/** What package.json says about Focus: the one source of its version and licence. */
export interface PackageInfo {
  readonly name: string;
  readonly version: string;
  readonly description: string;
  readonly license: string;
  readonly author: string;
}

export const PACKAGE = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as PackageInfo;
