import type { FailureCount, ParkedTask } from './task-failures.js';

/**
 * The work queue: wake-ups for tasks, nothing more. A task's state lives in the store; a job only
 * says "task T can make progress on a worker serving runtime R (from time t)". Running a wake-up
 * twice is harmless: the executor replays the log, and a task another worker holds is skipped.
 * See docs/distributed.md.
 */

/**
 * A wake-up for a task, in a lane: the workers serving the lane take it. The worker's lanes are
 * the runtimes it serves, `any` (steps that need no runtime) and `check` (is the task's holder
 * still alive?).
 */
export interface Wake {
  taskId: string;
  lane: string;
}

export interface WakeJob extends Wake {
  id: string;
  /** How many times this job was handed out before (pg-boss's retry count). */
  retries: number;
}

export interface DeadLetter {
  taskId: string;
  /** The last failure's message. */
  error: string;
  at: string;
}

export interface WorkOptions {
  lanes: readonly string[];
  /**
   * The worker's labels: it also takes the labelled lanes of its `lanes` (`claude--gpu`) whose
   * labels it all has, as they appear (a worker cannot know beforehand which pipelines need which).
   */
  labels?: readonly string[];
  /** At most this many handlers at once. */
  concurrency: number;
}

const LABEL_MARK = '--';

/** The lane of a step on `lane` (a runtime, or `any`) that needs workers with `labels`. */
export function labelledLane(lane: string, labels: readonly string[]): string {
  return [lane, ...[...new Set(labels)].sort()].join(LABEL_MARK);
}

/** Whether a worker on `lanes` with `labels` takes `lane` (labels are words joined by single dashes). */
export function servesLane(lane: string, lanes: readonly string[], labels: readonly string[]): boolean {
  const [base, ...needed] = lane.split(LABEL_MARK);
  return lanes.includes(base!) && needed.every((label) => labels.includes(label));
}

/**
 * Returns normally: the job is done. Throws: the job failed; it is retried with a backoff and,
 * past the retry limit, lands in the dead-letter queue.
 */
export type WakeHandler = (job: WakeJob) => Promise<void>;

export interface WorkQueue {
  /** A duplicate of a wake-up not yet taken collapses into it. */
  enqueue(wake: Wake, options?: { startAfter?: Date }): Promise<void>;
  /** Starts taking wake-ups of `options.lanes` until `stop` (called again: more lanes, their own slots). */
  work(options: WorkOptions, handler: WakeHandler): void;
  /**
   * The lanes paused now (`troupe queue pause`): no wake-up of theirs is taken until they are
   * resumed; those running go on. Replaces the lanes paused before.
   */
  pause(lanes: readonly string[]): void;
  /** Stops taking wake-ups; resolves when the handlers running have returned. */
  stop(): Promise<void>;
  /** Wake-ups whose retries ran out (since tasks are parked first: wake-ups for tasks this store lacks). */
  deadLetters(): Promise<DeadLetter[]>;
  /**
   * A failed wake-up of the task, counted against the task across jobs and workers
   * (task-failures.ts): past the retry limit the task is parked.
   */
  countFailure(taskId: string, error: string): Promise<FailureCount>;
  /** The task's parked mark, or null. */
  parkedTask(taskId: string): Promise<ParkedTask | null>;
  /** Every parked task, parked first first. */
  parked(): Promise<ParkedTask[]>;
  /**
   * A person resumed the task: out of the dead-letter queue, its failure count and parked mark
   * cleared; whether it was dead-lettered or parked.
   */
  revive(taskId: string): Promise<boolean>;
  close(): Promise<void>;
}
