import type { EventStore } from '../core/event-store.js';
import { applyEvent, foldEvents, type TaskState } from '../engine/fold/task-state.js';

/**
 * Folded task states, brought up to date from the log on each read (only the events since the
 * last read are applied), so listing tasks with their usage does not re-fold whole logs.
 */
export class TaskCache {
  #states = new Map<string, TaskState>();

  constructor(
    private readonly store: EventStore,
    private readonly size = 500,
  ) {}

  state(taskId: string): TaskState {
    let state = this.#states.get(taskId);
    if (state) {
      let restarted = false;
      for (const event of this.store.events(taskId, state.lastSeq)) {
        // a restart sets later events aside: the state must be folded again without them
        restarted = event.type === 'task_restarted';
        if (restarted) break;
        state = applyEvent(state, event);
      }
      // after the loop: reading the log again while it is being read is refused by SQLite
      if (restarted) state = foldEvents(this.store.events(taskId));
      this.#states.delete(taskId);
    } else {
      state = foldEvents(this.store.events(taskId));
    }
    this.#states.set(taskId, state!);
    if (this.#states.size > this.size) this.#states.delete(this.#states.keys().next().value!);
    return state!;
  }
}
