import type { Command } from 'commander';
import { action } from '../action.js';
import { processIo } from '../command-io.js';
import type { DecideOptions, Decision } from '../handlers/decide.js';

/** approve, reject and human-input: a person's word, then the task carries on here (or, `--detach`, on a worker). */
export function registerDecide(program: Command): void {
  const decide = async (taskId: string, decision: Decision, options: DecideOptions) =>
    (await import('../handlers/decide.js')).decide(taskId, decision, options, processIo());
  program
    .command('approve')
    .description('approve the output waiting at a human gate, and continue the task')
    .argument('<task>', 'task id')
    .option('-r, --reason <text>', 'why', '')
    .option('--json', 'print the task as JSON when it stops')
    .option('--detach', 'hand the task to the workers (`troupe worker`) instead of continuing it here')
    .action(
      action(async (taskId: string, options: DecideOptions & { reason: string }) =>
        decide(taskId, { kind: 'approve', reason: options.reason }, options),
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
      action(async (taskId: string, options: DecideOptions & { reason: string }) =>
        decide(taskId, { kind: 'reject', reason: options.reason }, options),
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
      action(async (taskId: string, words: string[], options: DecideOptions) =>
        decide(taskId, { kind: 'answer', answer: words.join(' ') }, options),
      ),
    );
}
