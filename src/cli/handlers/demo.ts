import { join, relative } from 'node:path';
import { openProject } from '../../app/project.js';
import { packageRoot } from '../../package-root.js';
import { loadPipeline } from '../../pipeline/load.js';
import { loadScript } from '../../runtimes/script.js';
import type { CommandIo } from '../command-io.js';
import { runForeground } from '../foreground.js';
import { shorter, troupeCommand } from '../self-command.js';

/** `troupe demo`: the bundled example team, run here offline, then where to look. */
export async function demo(io: CommandIo): Promise<number> {
  const example = (file: string) => join(packageRoot(), 'examples', 'dev-team', file);
  const project = openProject(io.cwd);
  const pipeline = loadPipeline(example('agents.yaml'), { name: 'demo-dev-team' });
  const id = project.tasks.start({
    pipeline,
    input: 'Add a /health endpoint that reports the build version',
    script: loadScript(example('script.yaml')),
    cwd: io.cwd,
  });
  const code = await runForeground(project, id, { json: false });
  const troupe = troupeCommand();
  const here = (path: string) => `${shorter(relative(io.cwd, path), path)}/`;
  const look: Array<[string, string]> = [
    [`${troupe} status ${id}`, 'stages, gate verdicts, tokens'],
    [`${troupe} context ${id}`, 'the shared context the agents saw'],
    [here(join(project.root, '.troupe', 'tasks', id)), "context.md and each agent's notes"],
    [here(join(packageRoot(), 'examples')), 'the pipelines and scripts to copy'],
  ];
  const width = Math.max(...look.map(([what]) => what.length)) + 2;
  io.out(
    [
      '',
      `The demo team (developer → reviewer with an llm gate → deployer) ran offline as task ${id}.`,
      'Look at:',
      ...look.map(([what, why]) => `  ${what.padEnd(width)}${why}`),
      '',
    ].join('\n'),
  );
  return code;
}
