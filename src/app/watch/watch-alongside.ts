import { messageOf } from '../../core/errors.js';
import { printable } from '../../core/printable.js';
import type { Project } from '../project.js';
import { PollTrigger } from './poll-trigger.js';
import { describeWatch, openWatchContext } from './watch-context.js';
import { watchLoop } from './watch-loop.js';

/** The watch loop run beside another job (`serve --watch`, `worker --watch`). */
export interface RunningWatch {
  /** What it watches and how often, for the start-up line. */
  describe: string;
  /** "Poll now": the tracker webhooks of `serve` pull it. */
  trigger: PollTrigger;
  /** Stops polling and interrupts the tasks it runs (as SIGTERM does to `troupe watch`). */
  stop(): Promise<void>;
}

/**
 * Starts `troupe watch`'s loop in this process: the tasks it starts run here, as they do under
 * `troupe watch` (other watchers, on this store, never start a second task for an issue: the
 * store's claim is taken once). A loop that ends on an error says so in one line.
 */
export async function startWatchAlongside(
  project: Pick<Project, 'root' | 'config' | 'store' | 'tasks'>,
  log: (line: string) => void,
): Promise<RunningWatch> {
  const ctx = await openWatchContext(project, { warn: log });
  const trigger = new PollTrigger();
  const stop = new AbortController();
  const loop = watchLoop(ctx, {
    once: false,
    signal: stop.signal,
    wake: trigger,
    onPoll: (result) => {
      for (const s of result.started) log(`watch: started ${s.taskId} for ${printable(s.issue.identifier)}`);
    },
  }).catch((error: unknown) => log(`watch: stopped: ${messageOf(error)}`));
  return {
    describe: describeWatch(ctx),
    trigger,
    async stop() {
      stop.abort();
      await loop;
    },
  };
}
