import { join, relative } from 'node:path';
import type { Command } from 'commander';
import { action } from '../action.js';

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('run the bundled example team offline (scripted replies) and show where to look')
    .action(
      action(async () => {
        const { openProject } = await import('../../app/project.js');
        const { loadPipeline } = await import('../../pipeline/load.js');
        const { loadScript } = await import('../../runtimes/script.js');
        const { runForeground } = await import('../foreground.js');
        const { packageRoot } = await import('../../package-root.js');
        const example = (file: string) => join(packageRoot(), 'examples', 'dev-team', file);
        const project = openProject();
        const pipeline = loadPipeline(example('agents.yaml'), { name: 'demo-dev-team' });
        const id = project.tasks.start({
          pipeline,
          input: 'Add a /health endpoint that reports the build version',
          script: loadScript(example('script.yaml')),
          cwd: process.cwd(),
        });
        const code = await runForeground(project, id, { json: false });
        const { troupeCommand, shorter } = await import('../self-command.js');
        const troupe = troupeCommand();
        const here = (path: string) => `${shorter(relative(process.cwd(), path), path)}/`;
        const look: Array<[string, string]> = [
          [`${troupe} status ${id}`, 'stages, gate verdicts, tokens'],
          [`${troupe} context ${id}`, 'the shared context the agents saw'],
          [here(join(project.root, '.troupe', 'tasks', id)), "context.md and each agent's notes"],
          [here(join(packageRoot(), 'examples')), 'the pipelines and scripts to copy'],
        ];
        const width = Math.max(...look.map(([what]) => what.length)) + 2;
        process.stdout.write(
          [
            '',
            `The demo team (developer → reviewer with an llm gate → deployer) ran offline as task ${id}.`,
            'Look at:',
            ...look.map(([what, why]) => `  ${what.padEnd(width)}${why}`),
            '',
          ].join('\n'),
        );
        return code;
      }),
    );
}
