import type { Command } from 'commander';
import type { Decider } from '../../core/events.js';
import { action } from '../action.js';

/** approve, reject and human-input: a person's word, then the task carries on here (or, `--detach`, on a worker). */
export function registerDecide(program: Command): void {
  program
    .command('approve')
    .description('approve the output waiting at a human gate, and continue the task')
    .argument('<task>', 'task id')
    .option('-r, --reason <text>', 'why', '')
    .option('--json', 'print the task as JSON when it stops')
    .option('--detach', 'hand the task to the workers (`troupe worker`) instead of continuing it here')
    .action(
      action(async (taskId: string, options: { reason: string; json?: boolean; detach?: boolean }) =>
        decide(taskId, options, (p, who) => p.tasks.decideGate(taskId, 'approved', options.reason, who())),
      ),
    );
  program
    .command('reject')
    .description('reject the output waiting at a human gate (with a reason), and continue the task')
    .argument('<task>', 'task id')
    .requiredOption('-r, --reason <text>', 'why (the agent gets it)')
    .option('--json', 'print the task as JSON when it stops')
    .option('--detach', 'hand the task to the workers (`troupe worker`) instead of continuing it here')
    .action(
      action(async (taskId: string, options: { reason: string; json?: boolean; detach?: boolean }) =>
        decide(taskId, options, (p, who) => p.tasks.decideGate(taskId, 'rejected', options.reason, who())),
      ),
    );
  program
    .command('human-input')
    .description('answer the question a task is waiting on, and continue it')
    .argument('<task>', 'task id')
    .argument('<answer...>', 'your answer')
    .option('--json', 'print the task as JSON when it stops')
    .option('--detach', 'hand the task to the workers (`troupe worker`) instead of continuing it here')
    .action(
      action(async (taskId: string, words: string[], options: { json?: boolean; detach?: boolean }) =>
        decide(taskId, options, (p) => p.tasks.answer(taskId, words.join(' '))),
      ),
    );
}

async function decide(
  taskId: string,
  options: { json?: boolean; detach?: boolean },
  record: (project: import('../../app/project.js').Project, who: () => Decider) => void,
): Promise<number> {
  const { openProject } = await import('../../app/project.js');
  const { personAtTerminal } = await import('../decider.js');
  const project = openProject();
  const json = options.json === true;
  if (options.detach) {
    const { submitTask } = await import('../submit.js');
    const recorded = () => {
      record(project, personAtTerminal);
      return taskId;
    };
    return submitTask(project, recorded, { json });
  }
  const { runForeground } = await import('../foreground.js');
  record(project, personAtTerminal);
  return runForeground(project, taskId, { json });
}
