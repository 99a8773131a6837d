// `npm run typecheck`: the two TypeScript projects (the Node code and tests, and the dashboard)
// checked at once, each incrementally: a rerun checks only what changed since the last one.
// Exits non-zero when either has errors, after both have printed theirs.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const projects = [
  ['tsconfig.json', 'node_modules/.cache/tsc/node.tsbuildinfo'],
  ['web/tsconfig.json', 'node_modules/.cache/tsc/web.tsbuildinfo'],
];
const check = ([project, buildInfo]) =>
  new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [tsc, '-p', project, '--incremental', '--tsBuildInfoFile', buildInfo],
      {
        stdio: 'inherit',
      },
    );
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
const codes = await Promise.all(projects.map(check));
process.exitCode = codes.some((code) => code !== 0) ? 1 : 0;
