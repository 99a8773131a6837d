import type { Command } from 'commander';
import { action } from '../action.js';

interface WorkerOptions {
  concurrency: string;
  runtimes?: string;
  labels?: string;
  queue?: string;
  grace: string;
  metricsPort?: string;
  metricsHost: string;
}

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
        const metricsPort = options.metricsPort === undefined ? null : Number(options.metricsPort);
        if (
          metricsPort !== null &&
          !(Number.isInteger(metricsPort) && metricsPort >= 0 && metricsPort < 65536)
        )
          throw new UsageError(`--metrics-port must be a port number (got \`${options.metricsPort}\`)`);
        const { installedRuntimes } = await import('../../runtimes/installed.js');
        const runtimes = options.runtimes ? list(options.runtimes) : installedRuntimes();
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
        const { QueueLevers } = await import('../../store/queue/queue-levers.js');
        const { VERSION } = await import('../version.js');
        const { openSharedLimits } = await import('../../store/queue/shared-limits.js');
        const { BackoffLog } = await import('../../app/backoff-log.js');
        const opened = openProject();
        const log = (line: string) => process.stderr.write(`troupe worker: ${line}\n`);
        // pg-boss's errors and the polling's failures while the database is away: backed off (D8)
        const errors = new BackoffLog(log);
        const id = newWorkerId();
        const { WorkerTally, workerMetrics, serveMetrics } = await import('../../app/metrics.js');
        // stages, takeovers, lease losses, wake-up failures: in its row of `troupe workers`, and its metrics
        const tally = new WorkerTally();
        const queue = await openQueue(opened, {
          given: options.queue,
          supervise: true,
          needed: 'troupe worker',
          onError: (error) => errors.error('queue', error),
          onWakeFailed: () => tally.wakeFailed(),
        });
        // `limits:` caps count every worker's calls (store/queue/shared-limits.ts)
        const limits = Object.keys(opened.config.limits).length
          ? await openSharedLimits(queueUrl(opened, options.queue)!, opened.config.limits, id)
          : null;
        const { meteredStore } = await import('../../app/metered-store.js');
        const store = meteredStore(opened.store, tally);
        const project = {
          ...opened,
          store,
          tasks: projectTaskService(opened.root, store, opened.config, limits ?? undefined),
        };
        const levers = new QueueLevers(queue.db, queue.schema);
        // SIGTERM/SIGINT drain with the worker's grace; `troupe worker drain|stop <id>` the same, stop with none
        let asked: ((lever: 'drain' | 'stop') => void) | null = null;
        const lever = new Promise<'signal' | 'drain' | 'stop'>((resolve) => {
          asked = resolve;
          process.once('SIGTERM', () => resolve('signal'));
          process.once('SIGINT', () => resolve('signal'));
        });
        const running = new Worker(project, queue, new WorkerRegistry(queue.db, queue.schema), {
          id,
          runtimes,
          labels,
          concurrency,
          checkSeconds: checkSeconds(),
          graceSeconds: grace,
          log,
          version: VERSION,
          counts: () => tally.counts,
          levers,
          onLever: (pulled) => asked?.(pulled),
        });
        await running.start();
        const metricsServer =
          metricsPort === null
            ? null
            : await serveMetrics(await workerMetrics(id, tally), metricsPort, options.metricsHost);
        const address = metricsServer?.address();
        if (address && typeof address === 'object')
          log(`metrics at http://${options.metricsHost}:${address.port}/metrics`);
        log(
          `${running.id} ready (troupe ${VERSION}; runtimes: ${runtimes.join(', ')}${labels.length ? `; labels: ${labels.join(', ')}` : ''}; concurrency ${concurrency})`,
        );
        const why = await lever;
        log(
          why === 'stop'
            ? 'stopping (asked by `troupe worker stop`): no new work; running stages are handed back now'
            : `stopping${why === 'drain' ? ' (asked by `troupe worker drain`)' : ''}: no new work; running stages finish or are handed back`,
        );
        await running.drain(why === 'stop' ? 0 : grace);
        metricsServer?.close();
        if (why !== 'signal') await levers.obeyed(id).catch(() => {});
        await queue.close();
        await limits?.close();
        project.store.close();
        log('stopped');
        return 0;
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
      .option('--queue <url>', "the queue's database (as for `troupe worker`)")
      .action(
        action(async (id: string, options: { queue?: string }) => {
          const { openProject } = await import('../../app/project.js');
          const { pullWorkerLever } = await import('../../app/queue-admin.js');
          await pullWorkerLever(openProject(), options.queue, id, lever);
          process.stdout.write(`${id}: asked to ${lever} (it reads this within 5 s)\n`);
          return 0;
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
    .option('--queue <url>', "the queue's database (as for `troupe worker`)")
    .option('--prune', 'first delete the rows of the gone workers (they expire by themselves after 24 h)')
    .option(
      '--json',
      'print JSON: [{id, host, pid, runtimes, labels, tasks, started, lastSeen, version, stages, takeovers, leaseLosses, wakeFailures, gone}]',
    )
    .action(
      action(async (options: { queue?: string; json?: boolean; prune?: boolean }) => {
        const { openProject } = await import('../../app/project.js');
        const { readOverview, pruneGoneWorkers } = await import('../../app/queue-admin.js');
        const { laneLine } = await import('../../store/queue/queue-overview.js');
        const { printJson } = await import('../options.js');
        const project = openProject();
        const pruned = options.prune ? await pruneGoneWorkers(project, options.queue) : null;
        const overview = (await readOverview(project, { given: options.queue, needed: 'troupe workers' }))!;
        if (options.json) {
          printJson(overview.workers);
          return 0;
        }
        if (pruned !== null) process.stdout.write(`pruned ${pruned} gone worker${pruned === 1 ? '' : 's'}\n`);
        for (const lane of overview.lanes) process.stdout.write(`lane ${laneLine(lane)}\n`);
        if (overview.workers.length === 0) process.stdout.write('no workers\n');
        const asked = new Map(
          overview.levers.filter((l) => l.kind === 'worker' && !l.done).map((l) => [l.target, l.action]),
        );
        for (const w of overview.workers) {
          const state = w.gone ? 'gone' : w.tasks.length ? `running ${w.tasks.join(', ')}` : 'idle';
          const labels = w.labels.length ? `  [${w.labels.join(', ')}]` : '';
          const lever = asked.has(w.id) ? `  (asked to ${asked.get(w.id)})` : '';
          process.stdout.write(
            `${w.id}  troupe ${w.version ?? '?'}  ${w.runtimes.join(',')}${labels}  ${state}${lever}  stages ${w.stages}, takeovers ${w.takeovers}, lease losses ${w.leaseLosses}, wake-up failures ${w.wakeFailures}  last seen ${w.lastSeen.slice(0, 19)}\n`,
          );
        }
        return 0;
      }),
    );
}

function list(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
