import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Project } from '../app/project.js';
import { checkSeconds, openQueue, queueUrl } from '../app/queue-config.js';
import { type RunningWatch, startWatchAlongside } from '../app/watch/watch-alongside.js';
import { StateError } from '../core/errors.js';
import { redactStoreUrl } from '../store/store-url.js';
import { createApp } from './app.js';
import type { LoginLinks } from './auth.js';
import type { WebhookSecrets } from './webhook-signature.js';

export interface ServeOptions {
  project: Project;
  port: number;
  host: string;
  token: string | null;
  /** The one-time links that open the dashboard (`?login=`). */
  logins?: LoginLinks;
  log?: (line: string) => void;
  webRoot?: string;
  /** Carry on the tasks whose process is gone, at start and every lease period (default true; `--no-adopt`). */
  adopt?: boolean;
  /**
   * Hand tasks to the project's work queue when it has one (default true), so they run on its
   * workers, in their lanes; false (`--no-queue`): run them in this process all the same.
   */
  queue?: boolean;
  /**
   * Run `troupe watch`'s loop in this process (`--watch`): the tasks it starts run here, even with
   * a work queue. Its tracker's webhooks (signed with `webhookSecrets`) make it poll at once.
   */
  watch?: boolean;
  webhookSecrets?: WebhookSecrets;
}

export interface RunningServer {
  url: string;
  port: number;
  /** Tasks resumed at start (left running by a process that is gone); none with `adopt: false` or a queue. */
  resumed: string[];
  /** Where tasks run: this process, or the work queue (its URL without the password). */
  runsOn: 'here' | { queue: string };
  /** What `--watch` watches (its start-up line); null without it. */
  watching: string | null;
  /** Stops taking requests and ends the live streams; waits up to `graceMs` for running tasks. */
  close(graceMs?: number): Promise<{ idle: boolean }>;
}

/** Starts the API and dashboard on host:port and carries on the tasks left running by a dead process (unless `adopt: false`). */
export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const url = options.queue === false ? null : queueUrl(options.project);
  const queue = url
    ? await openQueue(options.project, {
        needed: 'serve',
        onError: (e) => options.log?.(`queue: ${e.message}`),
      })
    : null;
  const troupe = createApp({
    project: options.project,
    queue,
    token: options.token,
    ...(options.logins ? { logins: options.logins } : {}),
    ...(options.log ? { log: options.log } : {}),
    ...(options.webRoot ? { webRoot: options.webRoot } : {}),
    webhooks: {
      secrets: options.webhookSecrets ?? {},
      wake: options.watch ? () => watch?.trigger.wake() : null,
    },
  });
  let watch: RunningWatch | null = null;
  try {
    // through the app's store and tasks, so what the watch starts is live on the dashboard
    watch = options.watch
      ? await startWatchAlongside(
          {
            root: options.project.root,
            config: options.project.config,
            store: troupe.ctx.store,
            tasks: troupe.ctx.tasks,
          },
          (line) => options.log?.(line),
        )
      : null;
  } catch (error) {
    await queue?.close();
    throw error;
  }
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: troupe.app.fetch, port: options.port, hostname: options.host }, () =>
      resolve(s),
    );
    s.once('error', reject);
  }).catch(async (error: NodeJS.ErrnoException) => {
    await watch?.stop();
    await queue?.close();
    if (error.code !== 'EADDRINUSE') throw error;
    throw new StateError(`port ${options.port} on ${options.host} is in use by another program`, {
      hint: `stop it, or serve on another port: --port ${options.port + 1}, or --port 0 for any free one`,
    });
  });
  const { port } = server.address() as AddressInfo;
  troupe.start();
  const adopt = options.adopt !== false;
  const resumed = adopt ? troupe.ctx.runner.resumeOrphans() : [];
  const stopAdopting = adopt ? troupe.ctx.runner.adoptOrphans(checkSeconds() * 1000) : () => {};
  const stopWatchingMail = troupe.ctx.runner.watchMail();
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}/`,
    port,
    resumed,
    runsOn: url ? { queue: redactStoreUrl(url) } : 'here',
    watching: watch?.describe ?? null,
    async close(graceMs = 2000) {
      // its running tasks are interrupted where they are, as SIGTERM does to `troupe watch`
      await watch?.stop();
      troupe.stop();
      stopWatchingMail();
      stopAdopting();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      if ('closeIdleConnections' in server) server.closeIdleConnections();
      const idle = await troupe.ctx.runner.drain(graceMs);
      if ('closeAllConnections' in server) server.closeAllConnections();
      await closed;
      await queue?.close();
      return { idle };
    },
  };
}
