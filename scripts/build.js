// `npm run build` (and `prepare`, so `npm ci`, `npm link` and `npm pack` run it): dist/ from the
// three tools, one line when all goes well. Each tool's own output is kept and printed in full
// only when it fails, or with `--verbose`: an install should not scroll past 200 lines of chunk
// sizes to show that nothing went wrong.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const resolve = createRequire(import.meta.url).resolve;

/** The script a package's bin `name` runs (its package.json says which). */
function binScript(pkg, name = pkg) {
  const manifest = resolve(`${pkg}/package.json`);
  const { bin } = JSON.parse(readFileSync(manifest, 'utf8'));
  return join(dirname(manifest), typeof bin === 'string' ? bin : bin[name]);
}

/** The build: each step a tool's script, run with this Node, from the package's root. */
export const buildSteps = [
  // dist/<domain>/: the modules benchmarks and tests import
  { name: 'tsc', script: binScript('typescript', 'tsc'), args: ['-p', 'tsconfig.build.json', '--noCheck'] },
  // dist/bundle/: the CLI (rolldown.config.js says why one bundle)
  { name: 'rolldown', script: binScript('rolldown'), args: ['-c', 'rolldown.config.js'] },
  // dist/web/: the dashboard
  { name: 'vite', script: binScript('vite'), args: ['build', '--config', 'web/vite.config.ts'] },
];

/**
 * Runs the steps in order. Quiet: each step's output is held and written to `err` (with the step
 * that failed) only if it fails, and then no later step runs. Verbose: all of it as it comes.
 * Returns the exit code.
 */
export async function runSteps(
  steps,
  { cwd = root, verbose = false, out = process.stdout, err = process.stderr } = {},
) {
  const started = Date.now();
  for (const step of steps) {
    const { code, output } = await runStep(step, cwd, verbose);
    if (code !== 0) {
      err.write(`${output}\ntroupe build: ${step.name} failed (exit ${code}); its output is above\n`);
      return code;
    }
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  out.write(`troupe build: dist/ built in ${seconds} s (${steps.map((s) => s.name).join(', ')})\n`);
  return 0;
}

function runStep(step, cwd, verbose) {
  return new Promise((done) => {
    const child = spawn(process.execPath, [step.script, ...step.args], {
      cwd,
      stdio: verbose ? 'inherit' : ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr?.on('data', (chunk) => {
      output += chunk;
    });
    child.on('error', (error) => done({ code: 1, output: `${output}${error.message}\n` }));
    child.on('close', (code, signal) => done({ code: code ?? (signal ? 1 : 0), output }));
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = await runSteps(buildSteps, { verbose: process.argv.includes('--verbose') });
}
