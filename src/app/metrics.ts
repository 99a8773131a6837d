import { createServer, type Server } from 'node:http';
import type { QueueOverview } from '../store/queue/queue-overview.js';
import { NO_COUNTS, type WorkerCounts } from '../store/queue/worker-registry.js';

/**
 * Metrics an operator can scrape, in Prometheus's text format (prom-client, loaded only by the
 * processes that serve them): the queue's gauges on `troupe serve`'s `GET /metrics`, read when
 * scraped; a worker's counters on `troupe worker --metrics-port`. See docs/distributed.md.
 */

export interface Metrics {
  contentType: string;
  render(): Promise<string>;
}

export interface ServerMetricsSource {
  /** The queue's overview; null without a queue (the gauges of the queue are then absent). */
  overview: () => Promise<QueueOverview | null>;
  /** Every task's status (counted by status). */
  statuses: () => string[];
}

/** The gauges of `GET /metrics`: the queue per lane, workers by state, dead letters, tasks by status. */
export async function serverMetrics(source: ServerMetricsSource): Promise<Metrics> {
  const { Gauge, Registry } = await import('prom-client');
  const registry = new Registry();
  const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[] = []) =>
    new Gauge<L>({ name, help, labelNames, registers: [registry] });
  const lane = ['lane'] as const;
  const backlog = gauge('troupe_queue_backlog', 'wake-ups not taken yet (due or scheduled)', lane);
  const due = gauge('troupe_queue_due', 'wake-ups due now and not taken', lane);
  const oldest = gauge(
    'troupe_queue_oldest_wait_seconds',
    'how long the oldest due wake-up has waited (0: none due)',
    lane,
  );
  const active = gauge('troupe_queue_active_jobs', 'wake-ups a worker took and has not finished', lane);
  const retrying = gauge('troupe_queue_retrying', 'wake-ups waiting to be tried again after a failure', lane);
  const failed = gauge(
    'troupe_queue_failed',
    'wake-ups failed past their retry limit (kept by pg-boss)',
    lane,
  );
  const paused = gauge('troupe_queue_paused', '1 when the lane is paused (troupe queue pause)', lane);
  const unheld = gauge(
    'troupe_queue_active_unheld',
    'active wake-ups no live worker holds (its worker died)',
  );
  const dead = gauge('troupe_dead_letters', 'tasks in the dead-letter queue');
  const workers = gauge('troupe_workers', 'workers on the queue by state', ['state'] as const);
  const tasks = gauge('troupe_tasks', 'tasks by status', ['status'] as const);
  return {
    contentType: registry.contentType,
    async render() {
      // read once per scrape, then every gauge set from it (lanes that went away are dropped)
      for (const metric of [backlog, due, oldest, active, retrying, failed, paused, workers, tasks])
        metric.reset();
      const counts = new Map<string, number>();
      for (const status of source.statuses()) counts.set(status, (counts.get(status) ?? 0) + 1);
      for (const [status, n] of counts) tasks.set({ status }, n);
      const seen = await source.overview();
      if (seen) {
        for (const l of seen.lanes) {
          const at = { lane: l.lane };
          backlog.set(at, l.backlog);
          due.set(at, l.due);
          oldest.set(at, l.oldestWaitSeconds ?? 0);
          active.set(at, l.active);
          retrying.set(at, l.retrying);
          failed.set(at, l.failed);
          paused.set(at, l.paused ? 1 : 0);
        }
        unheld.set(seen.active.filter((job) => job.holder === null).length);
        dead.set(seen.deadLetters);
        for (const state of ['idle', 'running', 'gone'] as const) workers.set({ state }, 0);
        for (const w of seen.workers)
          workers.inc({ state: w.gone ? 'gone' : w.tasks.length ? 'running' : 'idle' });
      }
      return registry.metrics();
    },
  };
}

export interface WorkerCounters {
  stageRun(): void;
  takeover(): void;
  leaseLost(): void;
  wakeFailed(): void;
}

/**
 * A worker's counts since it started: counted here once, written into its row of `troupe workers`
 * on each heartbeat, and read by its Prometheus counters when it serves `--metrics-port`.
 */
export class WorkerTally implements WorkerCounters {
  private readonly counted: WorkerCounts = { ...NO_COUNTS };

  get counts(): WorkerCounts {
    return { ...this.counted };
  }

  stageRun(): void {
    this.counted.stages++;
  }
  takeover(): void {
    this.counted.takeovers++;
  }
  leaseLost(): void {
    this.counted.leaseLosses++;
  }
  wakeFailed(): void {
    this.counted.wakeFailures++;
  }
}

/** A worker's counters (read from its tally when scraped). */
export async function workerMetrics(workerId: string, tally: WorkerTally): Promise<Metrics> {
  const { Counter, Registry } = await import('prom-client');
  const registry = new Registry();
  registry.setDefaultLabels({ worker: workerId });
  const counter = (name: string, help: string, count: keyof WorkerCounts) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(tally.counts[count]);
      },
    });
  counter('troupe_worker_stages_run_total', 'stages this worker ran to their end', 'stages');
  counter(
    'troupe_worker_takeovers_total',
    'tasks this worker took over from a holder that did not hand them back (died, cut off)',
    'takeovers',
  );
  counter('troupe_worker_lease_losses_total', 'tasks whose lease this worker lost to another', 'leaseLosses');
  counter(
    'troupe_worker_wakeup_failures_total',
    'wake-ups that failed here (retried, or dead)',
    'wakeFailures',
  );
  return { contentType: registry.contentType, render: () => registry.metrics() };
}

/** Serves `GET /metrics` on host:port (a worker's); resolves once listening. */
export function serveMetrics(metrics: Metrics, port: number, host: string): Promise<Server> {
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n');
      return;
    }
    metrics.render().then(
      (text) => response.writeHead(200, { 'content-type': metrics.contentType }).end(text),
      (error: Error) => response.writeHead(500, { 'content-type': 'text/plain' }).end(`${error.message}\n`),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}
