import type { EventStore } from '../core/event-store.js';
import type { WorkerCounters } from './metrics.js';

/**
 * The store, counting for a worker's metrics what passes through it: each stage that ended here
 * (`stage_completed` appended), each task taken over from a holder that never handed it back (its
 * lease still recorded when this process took it), each lease lost (once per taking).
 */
export function meteredStore(store: EventStore, counters: WorkerCounters): EventStore {
  const held = new Set<string>();
  store.onLeaseLost?.((taskId) => {
    if (held.delete(taskId)) counters.leaseLost();
  });
  return new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (key === 'append')
        return (...args: Parameters<EventStore['append']>) => {
          const stored = target.append(...args);
          for (const event of args[1]) if (event.type === 'stage_completed') counters.stageRun();
          return stored;
        };
      if (key === 'tryLease')
        return (...args: Parameters<EventStore['tryLease']>) => {
          const before = target.lease(args[0]);
          const taken = target.tryLease(...args);
          if (taken) {
            held.add(args[0]);
            const { pid, host } = args[1];
            if (before && (before.holder.pid !== pid || before.holder.host !== host)) counters.takeover();
          }
          return taken;
        };
      if (key === 'releaseLease')
        return (...args: Parameters<EventStore['releaseLease']>) => {
          held.delete(args[0]);
          target.releaseLease(...args);
        };
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
