// Target 2: wall time of `troupe --version` and `troupe validate` (10 agents), against `node -e 0`.
import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { makeProject, median, nowMs } from './lib.js';

const BIN = fileURLToPath(new URL('../bin/troupe.js', import.meta.url));

function timeSpawn(args, cwd) {
  const t0 = nowMs();
  const r = spawnSync(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  const ms = nowMs() - t0;
  if (r.status !== 0) {
    throw new Error(
      `node ${args.join(' ')} exited ${r.status ?? r.signal}: ${(r.stderr || r.stdout).trim().slice(0, 500)}`,
    );
  }
  return ms;
}

export function measureStartup({ warmup = 2, runs = 10, log = () => {} } = {}) {
  const project = makeProject('startup', 10);
  const cases = {
    baseline: ['-e', '0'],
    version: [BIN, '--version'],
    validate: [BIN, 'validate', project.pipelineFile],
  };
  const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  log(`  warm-up: ${warmup} runs each`);
  for (let i = 0; i < warmup; i++) for (const args of Object.values(cases)) timeSpawn(args, project.root);
  log(`  measuring: ${runs} interleaved runs each`);
  const names = Object.keys(cases);
  for (let i = 0; i < runs; i++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(i + k) % names.length];
      times[name].push(timeSpawn(cases[name], project.root));
    }
  }
  return {
    runs,
    baselineMs: median(times.baseline),
    versionMs: median(times.version),
    validateMs: median(times.validate),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(measureStartup({ log: console.log }));
}
