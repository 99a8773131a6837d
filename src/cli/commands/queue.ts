import type { Command } from 'commander';
import { action } from '../action.js';
import { queueAdminOption } from '../arg-parsers.js';
import { processIo } from '../command-io.js';
import type { QueueOptions } from '../handlers/queue.js';

/** `troupe queue`: the work queue per lane, and the levers on its lanes (docs/distributed.md). */
export function registerQueue(program: Command): void {
  const queue = program
    .command('queue')
    .description(
      "the work queue per lane: backlog, oldest waiting wake-up, active jobs and their workers, retries, failed, dead letters; the workers' takeovers, lease losses, wake-up failures",
    )
    .addOption(queueAdminOption())
    .option('--json', 'print JSON: {lanes, active, deadLetters, workers, totals, levers}')
    .action(
      action(async (options: QueueOptions) => {
        const { showQueue } = await import('../handlers/queue.js');
        return showQueue(options, processIo());
      }),
    );
  for (const paused of [true, false]) {
    const verb = paused ? 'pause' : 'resume';
    queue
      .command(`${verb} <lane>`)
      .description(
        paused
          ? 'workers take no new wake-ups of the lane (within 5 s); those running go on'
          : 'workers take the wake-ups of a paused lane again',
      )
      .addOption(queueAdminOption())
      .action(
        action(async (lane: string, options: { queue?: string }) => {
          const { pauseLane } = await import('../handlers/queue.js');
          return pauseLane(lane, paused, options, processIo());
        }),
      );
  }
}
