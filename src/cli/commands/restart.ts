import { resolve } from 'node:path';
import type { Command } from 'commander';
import { action } from '../action.js';

export function registerRestart(program: Command): void {
  program
    .command('restart')
    .description(
      'run a task again from a stage (default: the failed one); later events are set aside, not deleted',
    )
    .argument('<task>', 'task id')
    .option('--from-stage <n>', 'stage number to run again from')
    .option('--json', 'print the task as JSON when it stops')
    .action(
      action(async (taskId: string, options: { fromStage?: string; json?: boolean }) => {
        const { openProject } = await import('../../app/project.js');
        const { runForeground } = await import('../foreground.js');
        const { UsageError } = await import('../../core/errors.js');
        const from = options.fromStage === undefined ? undefined : Number(options.fromStage);
        if (from !== undefined && !Number.isInteger(from))
          throw new UsageError(`--from-stage expects a stage number, got '${options.fromStage}'`);
        const project = openProject();
        const n = project.tasks.restart(taskId, from);
        if (!options.json) process.stderr.write(`restarting ${taskId} from stage ${n}\n`);
        return runForeground(project, taskId, { json: options.json === true });
      }),
    );
  program
    .command('fix')
    .description("start a follow-up task that carries a task's context, linked to it")
    .argument('<task>', 'the task to follow up')
    .argument('<request...>', 'what to fix or do next')
    .option('-a, --agent <id>', 'start at this agent')
    .option(
      '-s, --script <file>',
      'script for the follow-up (default: the first task’s script, if it had one)',
    )
    .option('--json', 'print the new task as JSON when it stops')
    .action(
      action(
        async (
          taskId: string,
          words: string[],
          options: { agent?: string; script?: string; json?: boolean },
        ) => {
          const { openProject } = await import('../../app/project.js');
          const { runForeground } = await import('../foreground.js');
          const { loadScript } = await import('../../runtimes/script.js');
          const project = openProject();
          const id = project.tasks.fix(taskId, words.join(' '), {
            ...(options.agent ? { agent: options.agent } : {}),
            ...(options.script ? { script: loadScript(resolve(options.script)) } : {}),
          });
          return runForeground(project, id, { json: options.json === true });
        },
      ),
    );
}
