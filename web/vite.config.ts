import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/*
 * The web app (contract section 12), built by scripts/build.js into dist/web and served by
 * the API's own process at `/`. JSX goes through Vite's built-in oxc transform with
 * Preact's automatic runtime, so no framework plugin is needed.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    // Everything is served from this server; no inline script so the page's CSP can forbid them.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
    reportCompressedSize: false,
  },
  server: { proxy: { '/api': 'http://127.0.0.1:8080', '/auth': 'http://127.0.0.1:8080', '/oauth': 'http://127.0.0.1:8080' } },
});
