/*
 * Rewrites what is rendered from the environment table (src/config/config.variables.ts):
 * the README's configuration table, between its markers, and .env.example.
 * src/config/config.test.ts fails when either is out of date.
 *
 *   npm run docs:env
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENV_TABLE_END, ENV_TABLE_START, environmentExample, environmentMarkdown } from '../src/config/config.docs.js';
import { PACKAGE_ROOT } from '../src/config/config.variables.js';

const readmePath = join(PACKAGE_ROOT, 'README.md');
const readme = readFileSync(readmePath, 'utf8');
const start = readme.indexOf(ENV_TABLE_START);
const end = readme.indexOf(ENV_TABLE_END);
if (start < 0 || end < start) throw new Error(`README.md lacks the ${ENV_TABLE_START} … ${ENV_TABLE_END} markers`);
writeFileSync(readmePath, `${readme.slice(0, start + ENV_TABLE_START.length)}\n${environmentMarkdown()}\n${readme.slice(end)}`);
writeFileSync(join(PACKAGE_ROOT, '.env.example'), environmentExample());
process.stdout.write('README.md and .env.example rewritten from the environment table\n');
