import type { TaskState } from '../fold/task-state.js';
import type { ExecutorPorts } from '../ports.js';

/** What a runtime call made on a task's behalf (a gate, a router) needs from the running task. */
export interface CallContext {
  taskId: string;
  state: TaskState;
  ports: Pick<ExecutorPorts, 'runtimeFor' | 'rawLogPath' | 'commandGate'>;
  /** Aborted when the task is cancelled or its run stops. */
  signal: AbortSignal;
}
