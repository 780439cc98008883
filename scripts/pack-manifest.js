// `npm pack` (prepack/postpack): the packed package.json carries no install-time script.
// `prepare` builds a checkout after `npm install`, but npm runs it (and warns about it,
// npm 11's allowScripts) when the tarball is installed, where dist/ comes built.
//
//   node scripts/pack-manifest.js strip     prepack: keep package.json aside, write it without `prepare`
//   node scripts/pack-manifest.js restore   postpack: put the original back
//
// A pack that died between the two leaves the copy behind; the next strip restores it first.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = join(root, 'package.json');
const kept = join(root, '.package.json.unpacked');

if (existsSync(kept)) renameSync(kept, manifest);
if (process.argv[2] === 'strip') {
  const text = readFileSync(manifest, 'utf8');
  const parsed = JSON.parse(text);
  for (const script of ['preinstall', 'install', 'postinstall', 'prepare']) delete parsed.scripts?.[script];
  writeFileSync(kept, text);
  writeFileSync(manifest, `${JSON.stringify(parsed, null, 2)}\n`);
}
