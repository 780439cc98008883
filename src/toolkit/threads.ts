import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * A worker thread running the module `name` next to `from` (the caller's import.meta.url):
 * the built JavaScript, or from the TypeScript sources (tests, `npm run dev`) that file
 * loaded through tsx first.
 */
export function spawnThread(from: string, name: string, options: WorkerOptions = {}): Worker {
  const fromSource = from.endsWith('.ts');
  const entry = new URL(`./${name}.${fromSource ? 'ts' : 'js'}`, from);
  if (!fromSource) return new Worker(entry, options);
  // The ESM build of tsx's API, next to the CommonJS one `require` resolves to.
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
  const load = `import(${JSON.stringify(tsx)}).then(({ tsImport }) => tsImport(${JSON.stringify(entry.href)}, ${JSON.stringify(entry.href)}))`;
  return new Worker(load, { ...options, eval: true });
}
