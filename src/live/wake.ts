import { readdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { openBus } from '../bus/bus.js';
import { mailbox } from '../bus/layout.js';
import {
  acquireWakeLock,
  lockState,
  readWakeLock,
  releaseWakeLock,
  type WakeLock,
} from '../bus/wake-lock.js';
import { watchChanges } from '../bus/watch.js';
import { DEFAULT_DOORBELL, type DoorbellConfig, noticeText, ring, startDoorbell } from './doorbell.js';
import { type NoticeSink, tmuxSink } from './notice-sink.js';
import type { Tmux } from './tmux.js';

export interface WakeOptions {
  root: string;
  me: string;
  /** The tmux pane the agent runs in; without one, notices only go to this process's output. */
  pane?: string;
  tmux: Tmux;
  /** Without a pane: the cmux surface or Ghostty terminal to type notices to (notice-sink.ts). */
  sink?: NoticeSink;
  /** How the agent runs troupe (`troupe`, `npx troupe`, …), for the command in the notice. */
  troupe: string;
  doorbell?: Partial<DoorbellConfig>;
  poll?: boolean;
  /** Stop a running wake of this agent and take its place (launch does, for a new pane). */
  replace?: boolean;
  signal: AbortSignal;
  log: (line: string) => void;
}

export type WakeEnd = 'stopped' | 'pane_gone' | 'already_running';

/**
 * `troupe wake`: one per agent (its lock), watching the agent's `inbox/new` (fs events, with a
 * polling fallback) and typing one short notice into the agent's pane when mail comes, on the
 * doorbell's schedule. Mail already waiting is left unannounced, unless the wake before this one
 * died (then nobody told the agent of it). Ends when its pane goes, on abort, or at once when
 * another wake owns the agent.
 */
export async function runWake(options: WakeOptions): Promise<{ end: WakeEnd; owner?: WakeLock }> {
  const { me, pane, tmux } = options;
  const box = mailbox(options.root, me);
  const bus = openBus(options.root);
  const fields = {
    agent: me,
    root: options.root,
    ...(pane ? { pane } : {}),
    ...(tmux.socket ? { tmux_socket: tmux.socket } : {}),
  };
  // a wake that died (its lock left stale) announced nothing since: what waits now is news
  const previous = readWakeLock(box);
  const previousDied = previous !== undefined && lockState(previous) === 'stale';
  let taken = acquireWakeLock(box, fields);
  if (!taken.acquired && options.replace && lockState(taken.owner) === 'running') {
    options.log(`replacing the wake of ${me} (pid ${taken.owner.pid})`);
    await stopOwner(box, taken.owner);
    taken = acquireWakeLock(box, fields);
  }
  if (!taken.acquired) return { end: 'already_running', owner: taken.owner };
  const config = { ...DEFAULT_DOORBELL, ...options.doorbell };
  const readCommand = `${options.troupe} bus drain --me ${me} --include-body`;
  const sink = pane ? tmuxSink(tmux, pane) : options.sink;
  let end: WakeEnd = 'stopped';
  let finish: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const stop = (why: WakeEnd) => {
    end = why;
    finish();
  };

  // armed before the baseline listing, so nothing that lands in between is missed
  let state = startDoorbell([]);
  let armed = false;
  const look = () => {
    if (!armed) return;
    const unread = unreadNames(box.inboxNew);
    const step = ring(state, unread, Date.now(), config);
    state = step.state;
    if (!step.announce) return;
    const wanted = new Set(step.announce.map((n) => n.slice(0, -3)));
    const items = bus.list(me).items.filter((i) => wanted.has(i.id));
    if (items.length === 0) return;
    const text = noticeText(me, items, readCommand);
    options.log(text);
    if (!sink) return;
    try {
      sink.type(text);
    } catch {
      stop('pane_gone');
    }
  };
  const changes = watchChanges(box.inboxNew, look, {
    debounceMs: 250,
    ...(options.poll ? { poll: true } : {}),
  });
  state = startDoorbell(previousDied ? [] : unreadNames(box.inboxNew));
  armed = true;
  options.log(
    `wake for ${me}: watching ${box.inboxNew} (${changes.mode})${sink ? `, notices to ${sink.describe}` : ''}`,
  );
  // the doorbell's retries, and the pane's health, need a clock as well as fs events
  const tick = setInterval(() => {
    look();
    if (sink && !sink.alive()) stop('pane_gone');
  }, 1000);
  const onAbort = () => stop('stopped');
  options.signal.addEventListener('abort', onAbort);
  if (options.signal.aborted) stop('stopped');
  await done;
  clearInterval(tick);
  changes.close();
  options.signal.removeEventListener('abort', onAbort);
  releaseWakeLock(box);
  return { end };
}

function unreadNames(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((n) => n.endsWith('.md') && !n.startsWith('.'))
      .sort();
  } catch {
    return [];
  }
}

/** SIGTERM to the owner, then wait (up to 5 s) for it to let the lock go or die. */
async function stopOwner(box: ReturnType<typeof mailbox>, owner: WakeLock): Promise<void> {
  try {
    process.kill(owner.pid, 'SIGTERM');
  } catch {
    return;
  }
  for (let i = 0; i < 50; i++) {
    const now = readWakeLock(box);
    if (!now || now.pid !== owner.pid || lockState(now) === 'stale') return;
    await sleep(100);
  }
}
