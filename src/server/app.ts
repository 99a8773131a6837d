import path from 'node:path';
import { Hono } from 'hono';
import type { Metrics } from '../app/metrics.js';
import { givenUp, resumeGivenUp } from '../app/parked.js';
import type { Project } from '../app/project.js';
import { projectTaskService } from '../app/project.js';
import { readOverview } from '../app/queue-admin.js';
import { queueUrl, queueWorkers } from '../app/queue-config.js';
import { enqueueWakeUps } from '../app/worker.js';
import type { EventStore } from '../core/event-store.js';
import { packageRoot } from '../package-root.js';
import type { WorkQueue } from '../store/queue/work-queue.js';
import { redactStoreUrl } from '../store/store-url.js';
import { serverApi } from './api/server.js';
import { guard, type LoginLinks } from './auth.js';
import { limitBodies } from './body-limit.js';
import type { ServerContext } from './context.js';
import { ApiError, errorResponse } from './errors.js';
import { EventHub } from './event-hub.js';
import { handle } from './handle.js';
import { openApiDocument } from './openapi.js';
import { busRoutes } from './routes/bus.js';
import { eventRoutes } from './routes/events.js';
import { pipelineRoutes } from './routes/pipelines.js';
import { queueRoutes } from './routes/queue.js';
import { registryRoutes } from './routes/registry.js';
import { runRoutes } from './routes/run.js';
import { taskRoutes } from './routes/tasks.js';
import { trackerWebhookRoutes, type WebhookOptions } from './routes/trackers.js';
import { usageRoutes } from './routes/usage.js';
import { workerRoutes } from './routes/workers.js';
import { Runner } from './runner.js';
import { serveDashboard } from './static-files.js';
import { TaskCache } from './task-cache.js';

export interface AppOptions {
  project: Pick<Project, 'root' | 'store' | 'config'>;
  /** Required on every request when set. */
  token?: string | null;
  /** The one-time links that open the dashboard (`?login=`). */
  logins?: LoginLinks;
  /** The built dashboard; default dist/web of the package. */
  webRoot?: string;
  pollMs?: number;
  log?: (line: string) => void;
  /** The project's work queue: tasks that can go on are handed to its workers, never run here. */
  queue?: WorkQueue | null;
  /** The tracker webhooks' secrets and the watch loop they wake (`serve --watch`); default: off (404). */
  webhooks?: WebhookOptions;
}

export interface TroupeApp {
  app: Hono;
  ctx: ServerContext;
  /** Starts polling the event log (live streams). */
  start(): void;
  /** Stops the live streams. */
  stop(): void;
}

/**
 * The HTTP API and dashboard over a project. Tasks run in this process through the same
 * TaskService as the CLI; its appends wake the live streams at once, and what other processes
 * write comes in when the store tells of it (PostgreSQL) or on a poll of the event log (SQLite).
 */
export function createApp(options: AppOptions): TroupeApp {
  const { project } = options;
  let hub: EventHub | undefined;
  const store = notifying(project.store, () => hub?.poke());
  hub = new EventHub(project.store, { pollMs: options.pollMs ?? 50 });
  const tasks = projectTaskService(project.root, store, project.config);
  const queue = async () => {
    const url = queueUrl(project);
    const overview = url ? await readOverview(project) : null;
    return url && overview ? { queue: redactStoreUrl(url), overview } : null;
  };
  let metrics: Promise<Metrics> | null = null;
  const withTasks = { ...project, store, tasks };
  const ctx: ServerContext = {
    root: project.root,
    store,
    tasks,
    cache: new TaskCache(store),
    runner: new Runner(
      tasks,
      store,
      options.log,
      options.queue ? (id) => enqueueWakeUps(options.queue!, tasks.state(id)).then(() => undefined) : null,
    ),
    hub,
    workers: () => queueWorkers(project),
    queue,
    metrics: () => {
      metrics ??= import('../app/metrics.js').then(({ serverMetrics }) =>
        serverMetrics({
          overview: async () => (await queue())?.overview ?? null,
          statuses: () => store.tasks().map((task) => task.status),
        }),
      );
      return metrics;
    },
    givenUp: () => givenUp(withTasks),
    resumeGivenUp: (which) => resumeGivenUp(withTasks, which),
  };

  const app = new Hono();
  app.onError((error, c) => errorResponse(c, error));
  // before the token check, which a tracker cannot pass: a webhook is let in by its signature
  app.route('/', trackerWebhookRoutes(options.webhooks ?? { secrets: {}, wake: null }));
  app.use(
    '*',
    guard({ token: options.token ?? null, ...(options.logins ? { logins: options.logins } : {}) }),
  );
  app.use('/api/*', limitBodies());
  handle(app, serverApi.openapi, ({ reply }) => reply(200, openApiDocument()));
  app.route('/', taskRoutes(ctx));
  app.route('/', runRoutes(ctx));
  app.route('/', pipelineRoutes(ctx));
  app.route('/', usageRoutes(ctx));
  app.route('/', eventRoutes(ctx));
  app.route('/', busRoutes(ctx));
  app.route('/', workerRoutes(ctx));
  app.route('/', queueRoutes(ctx));
  app.route('/', registryRoutes(ctx));
  app.all('/api/*', (c) =>
    errorResponse(c, new ApiError(404, 'not_found', `no route ${c.req.method} ${c.req.path}`)),
  );
  app.get('*', serveDashboard(options.webRoot ?? path.join(packageRoot(), 'dist', 'web')));

  return {
    app,
    ctx,
    start: () => ctx.hub.start(),
    stop: () => ctx.hub.close(),
  };
}

/** The store, telling `onAppend` after each write of this process. */
function notifying(store: EventStore, onAppend: () => void): EventStore {
  return new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (key !== 'append' && key !== 'createTask' && key !== 'restart') return value;
      return (...args: unknown[]) => {
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        onAppend();
        return result;
      };
    },
  });
}
