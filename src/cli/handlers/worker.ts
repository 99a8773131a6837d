import { BackoffLog } from '../../app/backoff-log.js';
import { meteredStore } from '../../app/metered-store.js';
import { serveMetrics, WorkerTally, workerMetrics } from '../../app/metrics.js';
import { openProject, projectTaskService } from '../../app/project.js';
import { checkSeconds, openQueue, queueUrl } from '../../app/queue-config.js';
import { startWatchAlongside } from '../../app/watch/watch-alongside.js';
import { newWorkerId, Worker } from '../../app/worker.js';
import { UsageError } from '../../core/errors.js';
import { WORKER_LABEL } from '../../core/pipeline.js';
import { isRuntimeName, RUNTIME_NAMES } from '../../core/runtimes.js';
import { installedRuntimes } from '../../runtimes/installed.js';
import { QueueLevers } from '../../store/queue/queue-levers.js';
import { openSharedLimits } from '../../store/queue/shared-limits.js';
import { WorkerRegistry } from '../../store/queue/worker-registry.js';
import type { CommandIo } from '../command-io.js';
import { VERSION } from '../version.js';

export interface WorkerOptions {
  concurrency: string;
  runtimes?: string;
  labels?: string;
  queue?: string;
  grace: string;
  metricsPort?: string;
  metricsHost: string;
  watch?: boolean;
}

export interface WorkerSettings {
  concurrency: number;
  /** Seconds running stages may take after SIGTERM (or `troupe worker drain`). */
  grace: number;
  runtimes: string[];
  labels: string[];
  metrics: { port: number; host: string } | null;
  queue: string | undefined;
}

/** What `troupe worker` was asked for, checked: a usage error for each bad flag. */
export function workerSettings(options: WorkerOptions, env: NodeJS.ProcessEnv = process.env): WorkerSettings {
  const concurrency = Number(options.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new UsageError(`--concurrency must be a whole number from 1 (got \`${options.concurrency}\`)`);
  const grace = Number(options.grace);
  if (!Number.isFinite(grace) || grace < 0)
    throw new UsageError(`--grace must be a number of seconds (got \`${options.grace}\`)`);
  const metricsPort = options.metricsPort === undefined ? null : Number(options.metricsPort);
  if (metricsPort !== null && !(Number.isInteger(metricsPort) && metricsPort >= 0 && metricsPort < 65536))
    throw new UsageError(`--metrics-port must be a port number (got \`${options.metricsPort}\`)`);
  const runtimes = options.runtimes ? list(options.runtimes) : installedRuntimes(env);
  const unknown = runtimes.filter((r) => !isRuntimeName(r));
  if (unknown.length || runtimes.length === 0)
    throw new UsageError(`--runtimes: unknown ${unknown.join(', ') || '(none given)'}`, {
      hint: `runtimes: ${RUNTIME_NAMES.join(', ')}`,
    });
  const labels = options.labels ? list(options.labels) : [];
  const badLabel = labels.find((label) => !WORKER_LABEL.test(label));
  if (badLabel !== undefined)
    throw new UsageError(`--labels: \`${badLabel}\` is not a label`, {
      hint: 'lower-case letters and digits, words joined by single dashes: gpu, eu-west',
    });
  return {
    concurrency,
    grace,
    runtimes,
    labels,
    metrics: metricsPort === null ? null : { port: metricsPort, host: options.metricsHost },
    queue: options.queue,
  };
}

/** `troupe worker`: takes tasks from the work queue and runs them, until SIGTERM or a lever. */
export async function runWorker(options: WorkerOptions, io: CommandIo): Promise<number> {
  const settings = workerSettings(options);
  const opened = openProject(io.cwd);
  const log = (line: string) => io.err(`troupe worker: ${line}\n`);
  // pg-boss's errors and the polling's failures while the database is away: backed off (D8)
  const errors = new BackoffLog(log);
  const id = newWorkerId();
  // stages, takeovers, lease losses, wake-up failures: in its row of `troupe workers`, and its metrics
  const tally = new WorkerTally();
  const queue = await openQueue(opened, {
    given: settings.queue,
    supervise: true,
    needed: 'troupe worker',
    onError: (error) => errors.error('queue', error),
    onWakeFailed: () => tally.wakeFailed(),
  });
  // `limits:` caps count every worker's calls (store/queue/shared-limits.ts)
  const limits = Object.keys(opened.config.limits).length
    ? await openSharedLimits(queueUrl(opened, settings.queue)!, opened.config.limits, id)
    : null;
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
    runtimes: settings.runtimes,
    labels: settings.labels,
    concurrency: settings.concurrency,
    checkSeconds: checkSeconds(),
    graceSeconds: settings.grace,
    log,
    version: VERSION,
    counts: () => tally.counts,
    levers,
    onLever: (pulled) => asked?.(pulled),
  });
  // the watch's tasks run in this process, as under `troupe watch`; its claims keep one task an issue
  const watching = options.watch
    ? await startWatchAlongside(project, log).catch(async (error: unknown) => {
        await queue.close();
        await limits?.close();
        throw error;
      })
    : null;
  if (watching) log(`watch: ${watching.describe}`);
  await running.start();
  const metricsServer = settings.metrics
    ? await serveMetrics(await workerMetrics(id, tally), settings.metrics.port, settings.metrics.host)
    : null;
  const address = metricsServer?.address();
  if (address && typeof address === 'object')
    log(`metrics at http://${settings.metrics!.host}:${address.port}/metrics`);
  const labelled = settings.labels.length ? `; labels: ${settings.labels.join(', ')}` : '';
  log(
    `${running.id} ready (troupe ${VERSION}; runtimes: ${settings.runtimes.join(', ')}${labelled}; concurrency ${settings.concurrency})`,
  );
  const why = await lever;
  log(
    why === 'stop'
      ? 'stopping (asked by `troupe worker stop`): no new work; running stages are handed back now'
      : `stopping${why === 'drain' ? ' (asked by `troupe worker drain`)' : ''}: no new work; running stages finish or are handed back`,
  );
  await watching?.stop();
  await running.drain(why === 'stop' ? 0 : settings.grace);
  metricsServer?.close();
  if (why !== 'signal') await levers.obeyed(id).catch(() => {});
  await queue.close();
  await limits?.close();
  project.store.close();
  log('stopped');
  return 0;
}

function list(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
