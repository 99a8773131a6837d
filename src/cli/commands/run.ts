import type { Command } from 'commander';
import { action } from '../action.js';
import { wholeNumber } from '../arg-parsers.js';
import { processIo } from '../command-io.js';
import type { RunOptions } from '../handlers/run.js';
import { addInteractiveOptions, addPipelineOptions, collect } from '../pipeline-flags.js';

export function registerRun(program: Command): void {
  addInteractiveOptions(
    addPipelineOptions(
      program
        .command('run')
        .description('run a pipeline on an input, in the foreground, until it ends or waits for a person')
        .argument('[input...]', 'what to do (the words are joined)'),
    )
      .option('-a, --agent <id>', 'start at this agent instead of the entry point')
      .option('-s, --script <file>', 'run every agent and llm gate on the scripted runtime (offline)'),
  )
    .option(
      '--from <tasks.json>',
      'run a list of tasks [{id, input, depends_on?, agent?, labels?, tier?, size?}] instead of one input',
    )
    .option('-c, --concurrency <n>', 'with --from: how many tasks run at the same time', wholeNumber(1), 4)
    .option('--tier <name>', 'run every routed stage (model/effort auto) on this tier of routing: in config')
    .option('-l, --label <label>', 'a label for routing rules (repeatable)', collect, [])
    .option(
      '--size <size>',
      'the task size, S | M | L | XL (agents with `spec: required` need a spec from M)',
    )
    .option('--detach', 'submit the task to the workers (`troupe worker`), print its id and exit')
    .option(
      '--queue <url>',
      'with --detach: the queue, postgres://… (default: TROUPE_QUEUE, queue: in config)',
    )
    .option('--json', 'print the finished task as JSON')
    .action(
      action(async (words: string[], options: RunOptions) => {
        const { runTask } = await import('../handlers/run.js');
        return runTask(words, options, processIo());
      }),
    );
}
