import { isTroupeError, messageOf } from '../../core/errors.js';
import type { StoredEvent, TaskErrorKind, TaskEvent } from '../../core/events.js';
import { decisionLine } from '../../scheduler/decision-lines.js';
import { applyEvent, type TaskState } from '../fold/task-state.js';
import type { ExecutorPorts } from '../ports.js';

export interface BatchHooks {
  /** Events that change the task's files reached the state (streamed output alone does not). */
  filesChanged(): void;
  /** A flush is done: the loop may have something new to do. */
  flushed(): void;
}

/**
 * A running task's unit of work: its folded state, and the events recorded but not yet in the
 * store. `record` applies events to the state at once and queues them; `flush` appends the
 * queue in one transaction. The executor flushes before it waits and before any runtime, gate
 * command or person is involved, so every event is in the store before the next stage starts,
 * and a stage's completion, its handoff and the next stage's start cost one transaction.
 */
export class EventBatch {
  private current: TaskState;
  private pending: TaskEvent[] = [];
  private pendingAt: string | null = null;
  private readonly afterFlushActions: Array<() => void> = [];
  /** The poller's place in the log, and the events this process wrote that it has not passed yet. */
  private pollCursor: number;
  private readonly ownSeqs = new Set<number>();

  constructor(
    private readonly taskId: string,
    private readonly ports: Pick<ExecutorPorts, 'store' | 'observer' | 'decisionLog'>,
    state: TaskState,
    private readonly hooks: BatchHooks,
  ) {
    this.current = state;
    this.pollCursor = state.lastSeq;
  }

  get state(): TaskState {
    return this.current;
  }

  record(events: TaskEvent[]): void {
    this.pendingAt ??= new Date().toISOString();
    for (const event of events) {
      this.current = applyEvent(this.current, {
        ...event,
        seq: this.current.lastSeq,
        taskId: this.taskId,
        at: this.pendingAt,
      });
    }
    this.pending.push(...events);
  }

  /** Records the failure of the task as a whole (no stage's), with the error's message as the reason. */
  failTask(kind: TaskErrorKind, error: unknown): void {
    const reason = messageOf(error);
    const hint = isTroupeError(error) ? error.hint : undefined;
    this.record([{ type: 'task_failed', reason, stage: null, errorKind: kind, ...(hint ? { hint } : {}) }]);
  }

  /** Runs `action` once the events recorded so far are in the store. */
  afterFlush(action: () => void): void {
    this.afterFlushActions.push(action);
  }

  /**
   * Sends mail once the events recorded so far are in the store (as afterFlush). Mail that cannot
   * be delivered is recorded as `mail_failed` with the reason, stored by the same flush.
   */
  mailAfterFlush(mail: { to: string; kind: string; subject: string }, send: () => void): void {
    this.afterFlush(() => {
      try {
        send();
      } catch (error) {
        this.record([{ type: 'mail_failed', ...mail, reason: messageOf(error) }]);
      }
    });
  }

  flush(): void {
    if (this.pending.length === 0) return;
    const events = this.pending;
    const at = this.pendingAt!;
    this.pending = [];
    this.pendingAt = null;
    const stored = this.ports.store.append(this.taskId, events, { status: this.current.status }, at);
    this.passOwn(stored);
    this.current.lastSeq = stored.at(-1)?.seq ?? this.current.lastSeq;
    if (events.some((e) => e.type !== 'stage_output')) this.hooks.filesChanged();
    for (const event of stored) {
      this.ports.observer?.onEvent?.(event, this.current);
      if (event.type === 'decision')
        this.afterFlush(() => this.ports.decisionLog?.(decisionLine(this.taskId, at, event)));
    }
    for (const action of this.afterFlushActions.splice(0)) {
      try {
        action();
      } catch {
        // the decision log is a courtesy: a line that cannot be written never fails the task
      }
    }
    // what the actions recorded (mail_failed) is stored before anyone is told the flush is done
    if (this.pending.length > 0) this.flush();
    else this.hooks.flushed();
  }

  /** Applies the events other processes appended to this task (a cancel, a person's chunk edits). */
  applyForeignEvents(): void {
    for (const event of this.ports.store.events(this.taskId, this.pollCursor)) {
      this.pollCursor = event.seq;
      if (this.ownSeqs.delete(event.seq)) continue;
      this.current = applyEvent(this.current, event);
      this.hooks.filesChanged();
      this.ports.observer?.onEvent?.(event, this.current);
    }
  }

  /**
   * The poller need not read back what this process just wrote. When nothing at all was written
   * between its place and these events, it moves past them; otherwise it skips them as it meets
   * them (a foreign event may lie in between).
   */
  private passOwn(stored: StoredEvent[]): void {
    if (stored.length === 0) return;
    if (stored[0]!.seq === this.pollCursor + 1) {
      this.pollCursor = stored.at(-1)!.seq;
      return;
    }
    for (const event of stored) this.ownSeqs.add(event.seq);
  }
}
