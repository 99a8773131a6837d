import { existsSync, type FSWatcher, watch } from 'node:fs';
import { printable } from '../../core/printable.js';
import type { MessageBus } from '../bus.js';
import { tasksDir } from './files.js';
import { listTasks, type TeamTask } from './tasks.js';

/**
 * The swarm bridge, as AMQ's `swarm bridge`: watches a team's task list and turns changes that
 * concern one handle (tasks nobody holds, and its own) into ordinary bus messages in its inbox,
 * from `swarm-bridge` on thread `swarm/<team>`, with AMQ's labels and context. Tasks already
 * there when it starts are the baseline: only what changes afterwards is mailed.
 */

export type SwarmEventType =
  | 'task_added'
  | 'task_updated'
  | 'task_assigned'
  | 'task_unblocked'
  | 'task_completed';

export interface SwarmEvent {
  type: SwarmEventType;
  taskId: string;
  subject: string;
  status: string;
  details?: string;
}

/** What the bridge last saw of a task: `status:owner`, and whether its blockers were all done. */
export type Seen = Map<string, { state: string; unblocked: boolean }>;

export interface Me {
  handle: string;
  agentId: string;
}

const mine = (owner: string, me: Me) =>
  owner.toLowerCase() === me.handle || owner.toLowerCase() === me.agentId.toLowerCase();
const concerns = (t: TeamTask, me: Me) => t.owner === '' || mine(t.owner, me);

function unblocked(t: TeamTask, status: Map<string, string>): boolean {
  return t.blockedBy.every((dep) => status.get(dep) === 'completed');
}

/** The baseline: every task as it is now. */
export function seenNow(tasks: TeamTask[]): Seen {
  const status = new Map(tasks.map((t) => [t.id, t.status]));
  return new Map(
    tasks.map((t) => [t.id, { state: `${t.status}:${t.owner}`, unblocked: unblocked(t, status) }]),
  );
}

/** Pure: what changed since `seen` that concerns `me`; `seen` is updated to `tasks`. */
export function taskChanges(seen: Seen, tasks: TeamTask[], me: Me): SwarmEvent[] {
  const status = new Map(tasks.map((t) => [t.id, t.status]));
  const events: SwarmEvent[] = [];
  for (const t of tasks) {
    const before = seen.get(t.id);
    const state = `${t.status}:${t.owner}`;
    const event = { taskId: t.id, subject: t.subject, status: t.status };
    if (!before) {
      if (concerns(t, me)) events.push({ type: 'task_added', ...event });
    } else if (before.state !== state && concerns(t, me)) {
      const type: SwarmEventType =
        t.status === 'in_progress' && mine(t.owner, me)
          ? 'task_assigned'
          : t.status === 'completed'
            ? 'task_completed'
            : 'task_updated';
      events.push({ type, ...event, details: `owner=${t.owner}` });
    }
    const nowUnblocked = unblocked(t, status);
    if (
      before &&
      t.status === 'pending' &&
      t.blockedBy.length > 0 &&
      nowUnblocked &&
      !before.unblocked &&
      concerns(t, me)
    )
      events.push({
        type: 'task_unblocked',
        ...event,
        details: `blocked by ${t.blockedBy.join(', ')}, all completed`,
      });
    seen.set(t.id, { state, unblocked: nowUnblocked });
  }
  const present = new Set(tasks.map((t) => t.id));
  for (const id of seen.keys()) if (!present.has(id)) seen.delete(id);
  return events;
}

export function deliverSwarmEvent(bus: MessageBus, team: string, handle: string, event: SwarmEvent) {
  const lines = [`Task: ${event.taskId}`, `Status: ${event.status}`, `Type: ${event.type}`];
  if (event.details) lines.push(`Details: ${event.details}`);
  return bus.send({
    from: 'swarm-bridge',
    relay: true,
    to: handle,
    thread: `swarm/${team}`,
    subject: printable(`[swarm] ${event.type}: ${event.subject}`),
    kind: 'status',
    priority: 'normal',
    labels: ['swarm', event.type],
    context: { team, task_id: event.taskId, event: event.type, source: 'swarm-bridge' },
    body: `${lines.join('\n')}\n`,
  });
}

/**
 * Runs until `signal` aborts: a scan on every change in the team's task directory (debounced
 * 50 ms, as task writes are a temp file and a rename) and every `pollMs` in case no event comes.
 */
export async function runSwarmBridge(options: {
  bus: MessageBus;
  team: string;
  me: Me;
  pollMs: number;
  signal: AbortSignal;
  /** The baseline is taken: a task written from now on is mailed. */
  onStart?: () => void;
  onEvent?: (event: SwarmEvent) => void;
  onError?: (error: unknown) => void;
  /** A task file passed over: told once for as long as the bridge runs, not at every rescan. */
  onWarning?: (message: string) => void;
}): Promise<void> {
  const { bus, team, me, signal } = options;
  const told = new Set<string>();
  const warn = (message: string) => {
    if (told.has(message)) return;
    told.add(message);
    options.onWarning?.(message);
  };
  const seen = seenNow(listTasks(team, warn));
  options.onStart?.();
  const scan = () => {
    try {
      for (const event of taskChanges(seen, listTasks(team, warn), me)) {
        deliverSwarmEvent(bus, team, me.handle, event);
        options.onEvent?.(event);
      }
    } catch (error) {
      options.onError?.(error);
    }
  };
  let watcher: FSWatcher | undefined;
  let debounce: NodeJS.Timeout | undefined;
  const dir = tasksDir(team);
  if (existsSync(dir)) {
    try {
      watcher = watch(dir, () => {
        clearTimeout(debounce);
        debounce = setTimeout(scan, 50);
      });
    } catch {
      // no fs events here: the poll alone
    }
  }
  const timer = setInterval(scan, options.pollMs);
  scan(); // what changed between the baseline and the watch
  await new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
  clearInterval(timer);
  clearTimeout(debounce);
  watcher?.close();
}
