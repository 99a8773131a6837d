import type { Command } from 'commander';
import { action } from '../action.js';

interface WorkerOptions {
  concurrency: string;
  runtimes?: string;
  labels?: string;
  queue?: string;
  grace: string;
}

export function registerWorker(program: Command): void {
  program
    .command('worker')
    .description('take tasks from the work queue and run them, until SIGTERM (docs/distributed.md)')
    .option('-c, --concurrency <n>', 'how many tasks at the same time', '2')
    .option('--runtimes <list>', 'the runtimes this worker serves (comma list; default: all)')
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
    .action(
      action(async (options: WorkerOptions) => {
        const { UsageError } = await import('../../core/errors.js');
        const { RUNTIMES } = await import('../../pipeline/schema.js');
        const concurrency = Number(options.concurrency);
        if (!Number.isInteger(concurrency) || concurrency < 1)
          throw new UsageError(
            `--concurrency must be a whole number from 1 (got \`${options.concurrency}\`)`,
          );
        const grace = Number(options.grace);
        if (!Number.isFinite(grace) || grace < 0)
          throw new UsageError(`--grace must be a number of seconds (got \`${options.grace}\`)`);
        const runtimes = options.runtimes ? list(options.runtimes) : [...RUNTIMES];
        const unknown = runtimes.filter((r) => !(RUNTIMES as readonly string[]).includes(r));
        if (unknown.length || runtimes.length === 0)
          throw new UsageError(`--runtimes: unknown ${unknown.join(', ') || '(none given)'}`, {
            hint: `runtimes: ${RUNTIMES.join(', ')}`,
          });
        const { WORKER_LABEL } = await import('../../core/pipeline.js');
        const labels = options.labels ? list(options.labels) : [];
        const badLabel = labels.find((label) => !WORKER_LABEL.test(label));
        if (badLabel !== undefined)
          throw new UsageError(`--labels: \`${badLabel}\` is not a label`, {
            hint: 'lower-case letters and digits, words joined by single dashes: gpu, eu-west',
          });
        const { openProject, projectTaskService } = await import('../../app/project.js');
        const { openQueue, checkSeconds, queueUrl } = await import('../../app/queue-config.js');
        const { newWorkerId, Worker } = await import('../../app/worker.js');
        const { WorkerRegistry } = await import('../../store/queue/worker-registry.js');
        const { openSharedLimits } = await import('../../store/queue/shared-limits.js');
        const opened = openProject();
        const log = (line: string) => process.stderr.write(`troupe worker: ${line}\n`);
        const queue = await openQueue(opened, {
          given: options.queue,
          supervise: true,
          needed: 'troupe worker',
          onError: (error) => log(`queue: ${error.message}`),
        });
        const id = newWorkerId();
        // `limits:` caps count every worker's calls (store/queue/shared-limits.ts)
        const limits = Object.keys(opened.config.limits).length
          ? await openSharedLimits(queueUrl(opened, options.queue)!, opened.config.limits, id)
          : null;
        const project = limits
          ? { ...opened, tasks: projectTaskService(opened.root, opened.store, opened.config, limits) }
          : opened;
        const worker = new Worker(project, queue, new WorkerRegistry(queue.db, queue.schema), {
          id,
          runtimes,
          labels,
          concurrency,
          checkSeconds: checkSeconds(),
          graceSeconds: grace,
          log,
        });
        await worker.start();
        log(
          `${worker.id} ready (runtimes: ${runtimes.join(', ')}${labels.length ? `; labels: ${labels.join(', ')}` : ''}; concurrency ${concurrency})`,
        );
        await new Promise<void>((resolve) => {
          process.once('SIGTERM', resolve);
          process.once('SIGINT', resolve);
        });
        log('stopping: no new work; running stages finish or are handed back');
        await worker.drain();
        await queue.close();
        await limits?.close();
        project.store.close();
        log('stopped');
        return 0;
      }),
    );
}

export function registerWorkers(program: Command): void {
  program
    .command('workers')
    .description('the workers on the queue: runtimes, labels, tasks, when last seen')
    .option('--queue <url>', "the queue's database (as for `troupe worker`)")
    .option('--json', 'print JSON: [{id, host, pid, runtimes, labels, tasks, started, lastSeen, gone}]')
    .action(
      action(async (options: { queue?: string; json?: boolean }) => {
        const { openProject } = await import('../../app/project.js');
        const { openQueue } = await import('../../app/queue-config.js');
        const { WorkerRegistry } = await import('../../store/queue/worker-registry.js');
        const { printJson } = await import('../options.js');
        const project = openProject();
        const queue = await openQueue(project, { given: options.queue, needed: 'troupe workers' });
        try {
          const rows = await new WorkerRegistry(queue.db, queue.schema).list();
          if (options.json) {
            printJson(rows);
            return 0;
          }
          if (rows.length === 0) process.stdout.write('no workers\n');
          for (const w of rows) {
            const state = w.gone ? 'gone' : w.tasks.length ? `running ${w.tasks.join(', ')}` : 'idle';
            const labels = w.labels.length ? `  [${w.labels.join(', ')}]` : '';
            process.stdout.write(
              `${w.id}  ${w.runtimes.join(',')}${labels}  ${state}  last seen ${w.lastSeen.slice(0, 19)}\n`,
            );
          }
          return 0;
        } finally {
          await queue.close();
        }
      }),
    );
}

function list(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
