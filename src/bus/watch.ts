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
 * listing (10 ms later, letting a burst land). A slow poll runs as a backstop even when watching,
 * since inotify can miss events (overflow, some network and container file systems).
 */
export function watchDir(
  dir: string,
  list: () => { items: MessageItem[]; warnings: string[] },
  options: WatchOptions = {},
): Promise<WatchResult> {
  const { timeoutMs = 60_000, pollMs = 500 } = options;
  return new Promise((resolvePromise) => {
    let watcher: FSWatcher | undefined;
    let mode: 'watch' | 'poll' = 'poll';
    const timers: NodeJS.Timeout[] = [];
    let done = false;
    const finish = (event: WatchEvent, messages: MessageItem[] = [], warnings: string[] = []) => {
      if (done) return;
      done = true;
      watcher?.close();
      for (const t of timers) clearTimeout(t);
      options.signal?.removeEventListener('abort', onAbort);
      resolvePromise({ event, messages, warnings, mode });
    };
    const check = (event: WatchEvent) => {
      if (done) return;
      const { items, warnings } = list();
      // A corrupt file is reported (warnings) rather than waited on forever.
      if (items.length > 0 || warnings.length > 0) finish(event, items, warnings);
    };
    const onAbort = () => finish('aborted');
    options.signal?.addEventListener('abort', onAbort);
    if (!options.poll) {
      try {
        watcher = watch(dir, (_type, name) => {
          if (name && (name.startsWith('.') || !name.endsWith('.md'))) return;
          timers.push(setTimeout(() => check('new_message'), 10));
        });
        watcher.on('error', () => {
          watcher?.close();
          watcher = undefined;
        });
        mode = 'watch';
      } catch {
        watcher = undefined;
      }
    }
    timers.push(setInterval(() => check('new_message'), watcher ? Math.max(pollMs, 2000) : pollMs));
    if (timeoutMs > 0) timers.push(setTimeout(() => finish('timeout'), timeoutMs));
    check('existing');
  });
}
