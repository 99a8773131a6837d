/**
 * The pipeline as the engine sees it: loaded, params substituted, imports and extends
 * resolved, abstract agents dropped, shorthands expanded, defaults filled.
 * The raw YAML shape is `schema.ts`; `load.ts` turns one into the other.
 */

import type {
  ContextStrategy,
  Effort,
  GateType,
  HumanInputMode,
  Permissions,
} from './pipeline-vocabulary.js';
import type { GateRuntime, RuntimeName } from './runtimes.js';

export type { RuntimeName } from './runtimes.js';

export interface Handoff {
  /** Target agent ids (a comma list in YAML is a fan-out). `*` is allowed with `auto`. */
  to: string[];
  task: string;
  /** A `ConditionKeyword` (core/pipeline-vocabulary.ts) or an expression over the output's fields. */
  condition: string;
  /** Jinja2 template; default `{{ output }}`. */
  payload: string;
}

export interface Gate {
  type: GateType;
  prompt: string;
  model: string | null;
  max_retries: number;
  /** type command: run through the shell in the task's working directory. */
  command: string | null;
  /** The agent that judges, in a fresh checkout of the worker's commit (worker != tester). */
  verifier?: string | null;
  /** Seconds; falls back to config gate.timeout. */
  timeout: number | null;
  /** type llm: the runtime that judges; null → config gate.runtime → the agent's runtime. */
  runtime?: GateRuntime | null;
}

export interface McpServer {
  server: string;
  command: string | null;
  args: string[];
  env: Record<string, string> | null;
  /** A remote server (HTTP or SSE) instead of a command; `headers` go with every request. */
  url?: string | null;
  headers?: Record<string, string> | null;
  /** How a remote server is spoken to: streamable HTTP (default) or the older SSE. */
  transport?: 'http' | 'sse' | null;
}

/**
 * Runtime retries: a stage whose call failed with a retryable kind (network, overloaded, timeout)
 * runs again up to `max_retries` times, the first after `backoff` seconds, each next one after
 * twice as long (engine/plan/retry-policy.ts).
 */
export interface Retry {
  max_retries: number;
  fallback_context_strategy: ContextStrategy | null;
  backoff: number;
}

/** The retries of an agent without `retry:`, and the values `retry:` leaves out. */
export const DEFAULT_RETRY = { max_retries: 2, backoff: 10 } as const;

/**
 * A worker label (`troupe worker --labels gpu,eu-west`, an agent's `worker_labels:`): lower-case
 * words joined by single dashes, so a lane's name (`claude--eu-west--gpu`) parses back.
 */
export const WORKER_LABEL = /^[a-z0-9]+(-[a-z0-9]+)*$/;

export interface HumanInput {
  enabled: boolean;
  mode: HumanInputMode;
  prompt: string;
}

export interface Consensus {
  method: 'vote' | 'moderator_decides';
  keyword: string;
  require: 'all' | 'majority';
  require_chunks_done: boolean;
}

export interface Chunks {
  enabled: boolean;
  initial: string[];
}

export interface AgentBase {
  id: string;
  name: string;
  handoffs: Handoff[];
  context_strategy: ContextStrategy;
  context_window: number;
  /** A join: the agent a merge conflict between its branches goes to (null: a person). */
  on_conflict?: string | null;
  /** Where this agent was defined, for messages. */
  source: SourcePosition;
}

export interface AgentNode extends AgentBase {
  type: 'agent';
  runtime: RuntimeName;
  model: string | null;
  system_prompt: string;
  gate: Gate | null;
  mcp: McpServer[];
  cli_flags: string[];
  human_input: HumanInput | null;
  retry: Retry | null;
  /** Seconds; overrides config timeouts.<runtime>. */
  timeout: number | null;
  /** Allowed but unused on agents (aqm warns); kept so nothing is dropped. */
  chunks: Chunks | null;
  /** null: the runtime's default (edit inside a troupe worktree, read_only elsewhere). */
  permissions?: Permissions | null;
  /** auto: the routed tier's (model: auto implies it unless an effort is set). */
  effort?: Effort | 'auto' | null;
  /** Continue the CLI session of this agent's previous stage in the task. */
  resume?: boolean;
  /** Where a stage goes when the agent's runtime is closed by a limit, in order. */
  fallback?: Array<{ runtime: RuntimeName; model: string | null }>;
  /** runtime command: the argv. */
  command?: string[] | null;
  /** runtime mailbox: the bus handle (a live agent or a person) the stage is mailed to. */
  handle?: string | null;
  /** `required`: a spec before work of size M or larger (engine/spec.ts). */
  spec?: 'required' | 'none';
  /** The JSON Schema its output's JSON object must match, read from its file when one was named. */
  output_schema?: Record<string, unknown> | null;
  /** runtime openai: the endpoint (null fields use the defaults). */
  openai?: { base_url: string | null; api_key_env: string | null } | null;
  /** On a shared queue, only workers with all these labels run its stages (sorted, distinct). */
  worker_labels?: string[];
  /** A planner: its output is a plan whose pieces run as a graph (docs/task-graphs.md). */
  plan?: PlanSettings | null;
}

/** `plan:` on an agent: who works on each piece, who verifies it, and the graph's bounds. */
export interface PlanSettings {
  /** The agent that starts each piece, in the piece's worktree (with `pipeline`: its entry agent). */
  worker: string;
  /** Set when a sub-pipeline runs each piece: its agents are in this pipeline, its first is `worker`. */
  pipeline?: SubPipeline | null;
  /** The agent that judges each piece's commit in a fresh checkout (never the worker). */
  verifier: string | null;
  /** A plan that does not validate goes back to the planner at most this many times. */
  max_rounds: number;
  /** Pieces worked on at once (each also waits its turn under the provider `limits:`). */
  concurrency: number;
  /** A piece that failed sends the rest of the plan back to the planner at most this many times. */
  replans: number;
  /** `run`: the pieces' acceptance checks run as command gates; `verifier`: only the verifier reads them. */
  checks: 'run' | 'verifier';
}

/** `plan: { pipeline: … }`: the project pipeline whose agents run each piece (docs/task-graphs.md). */
export interface SubPipeline {
  /** As written: a pipeline name or a file. */
  name: string;
  file: string;
  /** Its agents' ids, in order (the first is the plan's worker). */
  agents: string[];
}

/** The defaults `plan:` fills in. */
export const PLAN_DEFAULTS = { max_rounds: 3, concurrency: 4, replans: 1, checks: 'verifier' } as const;

export interface SessionNode extends AgentBase {
  type: 'session';
  participants: string[];
  turn_order: 'round_robin' | 'moderator';
  max_rounds: number;
  consensus: Consensus;
  summary_agent: string | null;
  chunks: Chunks | null;
  system_prompt: string;
}

export type PipelineNode = AgentNode | SessionNode;

export interface ParamDefinition {
  type: 'string' | 'number' | 'boolean';
  default: unknown;
  required: boolean;
  description: string;
  prompt: string | null;
  auto_detect: string | null;
}

export interface WorkspaceSettings {
  isolation: 'worktree' | 'none';
  base: string | null;
  merge: 'on_complete' | 'manual' | 'never';
  branch_prefix: string;
  /** A git remote (name or URL) the task's branches are fetched from and pushed to; null: local only. */
  remote: string | null;
}

export interface SourcePosition {
  file: string;
  line: number;
  col: number;
}

export interface Pipeline {
  name: string;
  /** Absolute path of the file it was loaded from ('<inline>' when given as text). */
  file: string;
  apiVersion: string | null;
  entry_point: 'first' | 'auto';
  /** Where tasks of this pipeline work; null: in the directory they were started from. */
  workspace: WorkspaceSettings | null;
  /** Per task: a task stops before the stage that would go past it. */
  budget?: { tokens: number | null; usd: number | null } | null;
  /** Resolved param values (after --param, params file and defaults). */
  params: Record<string, unknown>;
  paramDefinitions: Record<string, ParamDefinition>;
  /** In file order, imported agents first (as aqm). Abstract agents removed. */
  agents: PipelineNode[];
}

export function findNode(pipeline: Pipeline, id: string): PipelineNode | undefined {
  return pipeline.agents.find((a) => a.id === id);
}
