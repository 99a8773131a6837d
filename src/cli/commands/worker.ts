import type { Command } from 'commander';
import { action } from '../action.js';
import { queueAdminOption } from '../arg-parsers.js';
import { processIo } from '../command-io.js';
import type { WorkerOptions } from '../handlers/worker.js';
import type { WorkersOptions } from '../handlers/workers.js';

export function registerWorker(program: Command): void {
  const worker = program
    .command('worker')
    .description('take tasks from the work queue and run them, until SIGTERM (docs/distributed.md)')
    .option('-c, --concurrency <n>', 'how many tasks at the same time', '2')
    .option(
      '--runtimes <list>',
      'the runtimes this worker serves (comma list; default: those installed here, a CLI not found is left out)',
    )
    .option(
      '--labels <list>',
      'what this worker has (comma list: gpu,eu-west): it also takes the stages of agents whose worker_labels it all has',
    )
    .option(
      '--queue <url>',
      "the queue's database, postgres://… (default: TROUPE_QUEUE, queue: in config, the store)",
    )
    .option(
      '--grace <seconds>',
      'after SIGTERM, how long running stages may take before they are aborted',
      '30',
    )
    .option(
      '--metrics-port <n>',
      "serve this worker's counters at http://<metrics-host>:<n>/metrics (Prometheus text; 0: any free port)",
    )
    .option('--metrics-host <address>', 'the address of --metrics-port', '127.0.0.1')
    .option(
      '--watch',
      "also run `troupe watch` here: take work from the project's tracker and run those tasks in this worker (docs/trackers.md)",
    )
    .action(
      action(async (options: WorkerOptions) => {
        const { runWorker } = await import('../handlers/worker.js');
        return runWorker(options, processIo());
      }),
    );
  for (const lever of ['drain', 'stop'] as const) {
    worker
      .command(`${lever} <id>`)
      .description(
        lever === 'drain'
          ? 'ask a worker (by its id in `troupe workers`), from any machine, to take no new work, let its running stages finish, and exit 0'
          : 'ask a worker (by its id in `troupe workers`), from any machine, to hand its running stages back now and exit 0',
      )
      .addOption(queueAdminOption())
      .action(
        action(async (id: string, options: { queue?: string }) => {
          const { pullLever } = await import('../handlers/workers.js');
          return pullLever(id, lever, options, processIo());
        }),
      );
  }
}

export function registerWorkers(program: Command): void {
  program
    .command('workers')
    .description(
      'the workers on the queue (version, runtimes, labels, tasks, stages run, takeovers, lease losses, wake-up failures, last seen), under a line per lane',
    )
    .addOption(queueAdminOption())
    .option('--prune', 'first delete the rows of the gone workers (they expire by themselves after 24 h)')
    .option(
      '--json',
      'print JSON: [{id, host, pid, runtimes, labels, tasks, started, lastSeen, version, stages, takeovers, leaseLosses, wakeFailures, gone}]',
    )
    .action(
      action(async (options: WorkersOptions) => {
        const { listWorkers } = await import('../handlers/workers.js');
        return listWorkers(options, processIo());
      }),
    );
}
