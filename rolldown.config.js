// The CLI ships as one bundle (dist/bundle/): Node loads one file per chunk instead of a few
// hundred ES modules, which is what keeps `troupe validate` under 150 ms. tsc still emits
// dist/<domain>/ for the modules other code imports (benchmarks, the future server).
import { defineConfig } from 'rolldown';

export default defineConfig({
  input: { main: 'src/cli/main.ts' },
  platform: 'node',
  // ajv is loaded with createRequire on first use (engine/json-schema-check.ts), not bundled
  external: ['better-sqlite3', /^ajv(\/|$)/],
  output: { dir: 'dist/bundle', format: 'esm', sourcemap: true, cleanDir: true },
});
