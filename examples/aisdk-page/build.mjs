// Bundles src/main.js and the ai package into dist/app.js, one ES module
// that index.html loads: `npm ci && npm run build`, then serve this folder
// (e2e/Caddyfile serves it at /page/ beside the aisdk routes).
import { build } from 'esbuild';

await build({
  entryPoints: ['src/main.js'],
  outfile: 'dist/app.js',
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  sourcemap: true,
  minify: true,
  logLevel: 'warning',
  absWorkingDir: new URL('.', import.meta.url).pathname,
});
