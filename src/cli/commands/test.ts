import type { Command } from 'commander';
import { action } from '../action.js';
import { processIo } from '../command-io.js';
import type { TestOptions } from '../handlers/test.js';
import { addPipelineOptions } from '../pipeline-flags.js';

export function registerTest(program: Command): void {
  addPipelineOptions(
    program.command('test').description('run a pipeline offline against a script; fails unless it completes'),
  )
    .option(
      '-s, --script <file>',
      'script of replies (default: script.yaml or <pipeline>.script.yaml beside the pipeline)',
    )
    .option('-i, --input <text>', 'the task input', 'troupe test')
    .option('-a, --agent <id>', 'start at this agent')
    .option('--json', 'print the finished task as JSON')
    .action(
      action(async (options: TestOptions) => {
        const { testPipeline } = await import('../handlers/test.js');
        return testPipeline(options, processIo());
      }),
    );
}
