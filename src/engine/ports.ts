import type { EventStore } from '../core/event-store.js';
import type { LeftoverProcess, StoredEvent } from '../core/events.js';
import type { McpDirective, TroupeMcpCall } from '../core/mcp-call.js';
import type { AgentNode, McpServer, RuntimeName } from '../core/pipeline.js';
import type { Env } from '../core/provider-key.js';
import type { CommandGateOptions, Runtime } from '../core/runtime.js';
import type { Script } from '../core/script.js';
import type { TaskMail } from '../core/task-mail.js';
import type { TaskWorkspace } from '../core/task-workspace.js';
import type { DecisionLog } from '../scheduler/decision-lines.js';
import type { ProviderTurns } from '../scheduler/provider-limiter.js';
import type { TaskState } from './fold/task-state.js';
import type { Step } from './plan/plan.js';

/**
 * What the engine needs from the world, as interfaces: the executor's ports for one run, and the
 * adapters a TaskService is built with. The concrete ones (SQLite, git, the bus, the CLIs) are
 * chosen at the edge, in app/ (the composition root); tests pass in-memory ones.
 */

/** The files written from a task's state for people and file-reading agents (store/task-files.ts). */
export interface TaskProjection {
  sync(state: TaskState): void;
  /** Resolves when every write asked for so far is done. */
  flushed(): Promise<void>;
}

export interface CommandGateResult {
  decision: 'approved' | 'rejected';
  reason: string;
}

/**
 * Ends every process on this machine tagged with the task's `taskProcessTag` (core/runtime.ts),
 * and resolves once each is confirmed gone, with what was ended.
 */
export type EndLeftovers = (taskId: string) => Promise<LeftoverProcess[]>;

/** Runs a gate's shell command in the task's working directory: exit 0 approves. */
export type CommandGate = (command: string, options: CommandGateOptions) => Promise<CommandGateResult>;

export interface HumanResponder {
  /** An answer available without waiting (a script's `human:` entry), or undefined. */
  answer(agent: string, index: number): string | undefined;
}

export interface RunObserver {
  onEvent?(event: StoredEvent, state: TaskState): void;
  onText?(stage: number, agent: string, text: string): void;
}

/** troupe's own MCP server, for agents with `mcp: [troupe]` (core/mcp-call.ts, docs/mcp.md). */
export interface TroupeMcp {
  /** The server one runtime call starts, with the call's identity; forgets what an earlier run of the call recorded. */
  server(call: TroupeMcpCall): McpServer;
  /** The directive-like tool calls the call made, in order. */
  directives(call: TroupeMcpCall): McpDirective[];
}

export interface ExecutorPorts {
  store: EventStore;
  /** The task's files for people and file-reading agents, written from its state. */
  files: TaskProjection;
  runtimeFor(state: TaskState, node: AgentNode, purpose: 'stage' | 'gate'): Runtime;
  human: (state: TaskState) => HumanResponder;
  observer?: RunObserver;
  /** How often another process's cancel is looked for. */
  pollMs?: number;
  /** How often streamed output is committed as stage_output events. */
  flushMs?: number;
  /** Where a runtime keeps the raw stream of a call (`.troupe/tasks/<id>/raw/<name>.jsonl`). */
  rawLogPath?: (taskId: string, name: string) => string;
  /** Git worktrees: `workspace: {isolation: worktree}`, or the default isolation (pipeline/isolation.ts). */
  workspace?: TaskWorkspace;
  /** The message bus: people are told when a task waits for them; agents read and send mail. */
  mail?: TaskMail;
  /**
   * Stops this process's run without ending the task (a server shutting down): runtimes are
   * aborted and nothing more is recorded, so the stage in progress is run again on resume.
   */
  stop?: AbortSignal;
  /** `.troupe/decisions.jsonl`: each decision when made, routed stages' outcomes when the task ends. */
  decisionLog?: DecisionLog;
  /** `limits:` caps per provider, shared by every task of this process. */
  limiter?: ProviderTurns;
  /** The environment the runtimes run in: which endpoint and account a call uses (core/provider-key.ts). */
  env?: Env;
  /** Runs a `gate: {type: command}`. */
  commandGate: CommandGate;
  /** `mcp: [troupe]`: without it the server is left as written. */
  troupeMcp?: TroupeMcp;
  /** Ends what an earlier owner of a task left running on this machine, before its stages run again. */
  endLeftovers?: EndLeftovers;
  /**
   * Steps this process leaves to others (a worker: a runtime it does not serve, a wait the queue
   * times, anything once it drains); the run ends when only they are left.
   */
  defer?: (step: Step, state: TaskState) => boolean;
}

/** The concrete world a TaskService runs tasks in; app/task-adapters.ts builds the real one. */
export interface TaskAdapters {
  /** The runtime for an agent or gate of a task started with `script` (null: none). */
  runtime(name: RuntimeName, script: Script | null): Runtime;
  files(taskId: string): TaskProjection;
  rawLogPath(taskId: string, name: string): string;
  /** The task's mail; opened only when first used. */
  mail(taskId: string, agents: () => readonly string[]): TaskMail;
  workspace: TaskWorkspace;
  decisionLog: DecisionLog;
  commandGate: CommandGate;
  troupeMcp?: TroupeMcp;
  endLeftovers?: EndLeftovers;
  /** The environment the runtimes run in (default: none, so provider keys are runtime names). */
  env?: Env;
}
