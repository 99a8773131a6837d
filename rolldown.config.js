// The CLI ships as one bundle (dist/bundle/): Node loads one file per chunk instead of a few
// hundred ES modules, which is what keeps `troupe validate` under 150 ms. tsc still emits
// dist/<domain>/ for the modules other code imports (benchmarks, the future server).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'rolldown';

export default defineConfig({
  input: { main: 'src/cli/main.ts' },
  platform: 'node',
  // what rolldown picked by itself (with a warning) for the `pipeline` group below, which keeps its
  // dependencies out (includeDependenciesRecursively: false): the CLI's entry may export more than
  // main.ts does, which nothing imports anyway
  preserveEntrySignatures: 'allow-extension',
  // ajv is loaded with createRequire on first use (engine/json-schema-check.ts), not bundled
  // pg and pg-boss (the work queue) are loaded only by `troupe worker`, `workers` and `--detach`
  // liquidjs (Symphony's WORKFLOW.md prompts) likewise, on first use (pipeline/symphony/liquid.ts)
  external: ['better-sqlite3', /^ajv(\/|$)/, 'pg', 'pg-boss', 'liquidjs'],
  resolve: {
    // yaml's ES module build (its "browser" entry: the same code, with console.warn for
    // process.emitWarning) instead of its CommonJS one: tree-shaken, and no CommonJS wrappers to run
    alias: { yaml: fileURLToPath(new URL('node_modules/yaml/browser/index.js', import.meta.url)) },
  },
  output: {
    dir: 'dist/bundle',
    format: 'esm',
    sourcemap: true,
    cleanDir: true,
    codeSplitting: {
      groups: [
        {
          // small leaf modules that the entry and most commands share, in one file rather than six
          name: 'common',
          test: /src[\\/]core[\\/]errors\.ts|src[\\/]app[\\/]store-choice\.ts|src[\\/]package-root\.ts|src[\\/]cli[\\/]exit-codes\.ts|src[\\/]pipeline[\\/]diagnostics\.ts|src[\\/]scheduler[\\/]prices\.ts|src[\\/]pipeline[\\/]lang[\\/]graph\.ts/,
        },
        {
          // what `troupe validate` (and every command that loads a pipeline) needs, in one file
          // rather than ten: zod, yaml, the pipeline modules, the template and condition checks
          name: 'pipeline',
          test: /node_modules[\\/](zod|yaml|jsep)[\\/]|src[\\/]pipeline[\\/](?!diagnostics|lang[\\/])|src[\\/]pipeline[\\/]lang[\\/](template|conditions)\.ts|src[\\/]core[\\/]pipeline\.ts/,
          // its small dependencies (errors.ts, diagnostics.ts) stay where `troupe --version` loads them
          includeDependenciesRecursively: false,
        },
      ],
    },
  },
});
