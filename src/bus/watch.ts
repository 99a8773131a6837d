import { type FSWatcher, watch } from 'node:fs';
import type { MessageItem } from './inbox.js';

export type WatchEvent = 'existing' | 'new_message' | 'timeout' | 'aborted';

export interface WatchOptions {
  /** 0 = forever. */
  timeoutMs?: number;
  /** Poll instead of fs.watch (network file systems, or to test the fallback). */
  poll?: boolean;
  pollMs?: number;
  signal?: AbortSignal;
}

export interface WatchResult {
  event: WatchEvent;
  messages: MessageItem[];
  warnings: string[];
  mode: 'watch' | 'poll';
}

/**
 * Waits until `list()` finds mail in `dir`, without consuming it. The watcher is armed before the
 * first listing, so mail that arrives in between is never missed; events only trigger a fresh
 * listing (see watchChanges).
 */
export function watchDir(
  dir: string,
  list: () => { items: MessageItem[]; warnings: string[] },
  options: WatchOptions = {},
): Promise<WatchResult> {
  const { timeoutMs = 60_000 } = options;
  return new Promise((resolvePromise) => {
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (event: WatchEvent, messages: MessageItem[] = [], warnings: string[] = []) => {
      if (done) return;
      done = true;
      changes.close();
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolvePromise({ event, messages, warnings, mode: changes.mode });
    };
    const check = (event: WatchEvent) => {
      if (done) return;
      const { items, warnings } = list();
      // A corrupt file is reported (warnings) rather than waited on forever.
      if (items.length > 0 || warnings.length > 0) finish(event, items, warnings);
    };
    const onAbort = () => finish('aborted');
    options.signal?.addEventListener('abort', onAbort);
    const changes = watchChanges(dir, () => check('new_message'), options);
    if (timeoutMs > 0) timer = setTimeout(() => finish('timeout'), timeoutMs);
    check('existing');
  });
}

export interface DirChanges {
  mode: 'watch' | 'poll';
  close(): void;
}

/**
 * Calls `onChange` soon after a message file may have appeared in or left `dir`: on fs events
 * (`debounceMs` later, letting a burst land), and on a poll every `pollMs` when fs.watch is not
 * available, else every 2 s as a backstop, since inotify can miss events (overflow, some network
 * and container file systems). The caller lists the directory itself: events only say "look".
 */
export function watchChanges(
  dir: string,
  onChange: () => void,
  options: { poll?: boolean; pollMs?: number; debounceMs?: number } = {},
): DirChanges {
  const { pollMs = 500, debounceMs = 10 } = options;
  let watcher: FSWatcher | undefined;
  let pending: NodeJS.Timeout | undefined;
  if (!options.poll) {
    try {
      watcher = watch(dir, (_type, name) => {
        if (name && (name.startsWith('.') || !name.endsWith('.md'))) return;
        if (pending) return;
        pending = setTimeout(() => {
          pending = undefined;
          onChange();
        }, debounceMs);
      });
      watcher.on('error', () => {
        watcher?.close();
        watcher = undefined;
      });
    } catch {
      watcher = undefined;
    }
  }
  const poll = setInterval(onChange, watcher ? Math.max(pollMs, 2000) : pollMs);
  return {
    mode: watcher ? 'watch' : 'poll',
    close() {
      watcher?.close();
      clearInterval(poll);
      clearTimeout(pending);
    },
  };
}
