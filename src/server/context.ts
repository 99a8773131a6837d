import type { Metrics } from '../app/metrics.js';
import type { GivenUp, Resumed } from '../app/parked.js';
import type { QueueWorkers } from '../app/queue-config.js';
import type { EventStore } from '../core/event-store.js';
import type { TaskService } from '../engine/task-service.js';
import type { QueueOverview } from '../store/queue/queue-overview.js';
import type { EventHub } from './event-hub.js';
import type { Runner } from './runner.js';
import type { TaskCache } from './task-cache.js';

/** What every route works with. */
export interface ServerContext {
  root: string;
  store: EventStore;
  tasks: TaskService;
  cache: TaskCache;
  runner: Runner;
  hub: EventHub;
  /** The workers on the project's queue; null when it has none. */
  workers: () => Promise<QueueWorkers | null>;
  /** The project's queue per lane (and where it is, without its password); null when it has none. */
  queue: () => Promise<{ queue: string; overview: QueueOverview } | null>;
  /** `GET /metrics` (made on the first scrape). */
  metrics: () => Promise<Metrics>;
  /** What the project's queue gave up on (parked tasks, dead letters); null when it has none. */
  givenUp: () => Promise<GivenUp | null>;
  /** Resumes tasks through the queue (ids, or every parked task); null when there is none. */
  resumeGivenUp: (which: readonly string[] | 'all') => Promise<Resumed[] | null>;
}
