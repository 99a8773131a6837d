import type { AgentNode } from '../../core/pipeline.js';
import type { RouteOutcome } from '../../scheduler/route-history.js';
import type { ExecutorPorts } from '../ports.js';
import type { CallContext } from './call-context.js';
import type { EventBatch } from './event-batch.js';
import type { FileSync } from './file-sync.js';
import type { RunWorkspace } from './run-workspace.js';

/**
 * What the executor's steps share while one task runs (execute.ts makes it, once per run). It is
 * a CallContext too: a gate or router call made on the task's behalf gets the same state and signal.
 */
export interface RunContext extends CallContext {
  readonly ports: ExecutorPorts;
  readonly events: EventBatch;
  readonly files: FileSync;
  readonly workspace: RunWorkspace;
  /** Limits met per stage in this process, for the backoff when a provider gives no reset time. */
  readonly rateLimits: Map<number, number>;
  agent(id: string): AgentNode;
  /** Outcomes of earlier routing decisions (all tasks), read once per run when a stage is routed. */
  routeHistory(): RouteOutcome[];
}
