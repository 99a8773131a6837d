import type { Command } from 'commander';
import { action } from '../action.js';
import { processIo } from '../command-io.js';
import type { WatchOptions } from '../handlers/watch.js';

export function registerWatch(program: Command): void {
  program
    .command('watch')
    .description(
      'take work from an issue tracker (tracker: in config, --workflow WORKFLOW.md, or backlog/): each eligible issue a task, run here',
    )
    .option('--once', 'poll once, run what it started to its end (or a person), then exit')
    .option('--dry-run', 'with --once: print what would start and why the others would not; change nothing')
    .option('--workflow <file>', "Symphony's WORKFLOW.md: its tracker, rules, prompt and pipeline")
    .option('-s, --script <file>', 'run every agent and llm gate on the scripted runtime (offline)')
    .option('--json', 'print each poll as JSON')
    .action(
      action(async (options: WatchOptions) =>
        (await import('../handlers/watch.js')).watch(options, processIo()),
      ),
    );
}
