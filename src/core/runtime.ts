import { TroupeError } from './errors.js';
import type { McpServer } from './pipeline.js';
import type { Effort, Permissions } from './pipeline-vocabulary.js';
import type { Usage } from './usage.js';

/**
 * One interface for every way an agent's work gets done: the CLIs people pay for, an
 * OpenAI-compatible endpoint, or the scripted runtime. A runtime turns a request into a
 * stream of events and reports failure as a RuntimeError with a stable kind.
 */

/** An OpenAI-compatible endpoint; the key is read from the environment, never stored. */
export interface OpenAiEndpoint {
  /** Default `https://api.openai.com/v1`. */
  baseUrl: string | null;
  /** The environment variable holding the key; without it, OPENAI_API_KEY only to api.openai.com. */
  apiKeyEnv: string | null;
}

/**
 * Every process troupe starts for a task (an agent and all it starts, a command gate) carries
 * `TROUPE_AGENT_TAG=<taskProcessTag(task)>…` in its environment, so that what a dead owner left
 * running can be found and ended before the task's stages run again (runtimes/supervisor.ts).
 */
export const PROCESS_TAG_ENV = 'TROUPE_AGENT_TAG';

export function taskProcessTag(taskId: string): string {
  return `${taskId}/`;
}

/**
 * Which attempt of which stage of which task a process works for: every agent and command gate
 * gets these, the key that makes its own side effects (a deploy, a ticket, a payment) idempotent
 * when a stage runs again after a crash or a takeover (docs/runtimes.md).
 */
export function attemptEnv(taskId: string, stage: number, attempt: number): Record<string, string> {
  return { TROUPE_TASK_ID: taskId, TROUPE_STAGE: String(stage), TROUPE_ATTEMPT: String(attempt) };
}

/**
 * What troupe's own environment holds that its agents and gates must not get: the server's
 * token would let an agent decide its own gate through the API, and the store's URL (often with
 * a password) would let it append a verdict to the log itself (docs/security.md). An agent's MCP
 * server gets the store it needs by name (`TROUPE_MCP_STORE`, core/mcp-call.ts).
 */
export const WITHHELD_FROM_AGENTS = ['TROUPE_TOKEN', 'TROUPE_STORE'] as const;

/** What a `gate: {type: command}` runs with (the engine's CommandGate port, runtimes/command-gate.ts). */
export interface CommandGateOptions {
  cwd: string;
  timeoutMs: number;
  signal: AbortSignal;
  env: Record<string, string>;
  /** As a runtime request's `processTag`: the task's, so a takeover can find what it left. */
  processTag?: string;
}

/**
 * Fields of an agent that one runtime alone reads, under that runtime's name: the others never
 * see them, and a new runtime's own fields go here rather than on every request.
 */
export interface RuntimeOptions {
  /** The argv to run. */
  command?: readonly string[];
  /** Where to send the request. */
  openai?: OpenAiEndpoint;
}

export interface RuntimeRequest {
  /** The agent (or, for purpose 'gate', the agent whose output is judged). */
  agentId: string;
  purpose: 'stage' | 'gate';
  /** The rendered prompt (aqm: the rendered system_prompt template). */
  prompt: string;
  /** The raw system prompt template, where the runtime passes one separately. */
  systemPrompt: string;
  model: string | null;
  effort: Effort | null;
  cwd: string;
  mcp: McpServer[];
  extraFlags: string[];
  timeoutMs: number;
  signal: AbortSignal;
  resumeSessionId: string | null;
  /**
   * What earlier calls for this agent in this task left in their `meta`, oldest first
   * (the scripted runtime keeps its place in the script this way, across processes).
   */
  previousMeta: ReadonlyArray<Record<string, string | number | boolean>>;
  /** null: `edit` inside a troupe worktree, `read_only` elsewhere (see permissions.ts). */
  permissions?: Permissions | null;
  /** What the agent gives only its own runtime (its `command:`, its `openai:` endpoint). */
  runtimeOptions?: RuntimeOptions;
  /** Added to the environment of every process of the call: the call's `attemptEnv`. */
  env?: Record<string, string> | null;
  /** What the `PROCESS_TAG_ENV` of every process of the call starts with: the task's `taskProcessTag`. */
  processTag?: string | null;
  /** When set, every raw line the runtime reads is appended here (for debugging). */
  rawLogPath?: string | null;
  /**
   * The agent's `output_schema:`, for a CLI that can hold the model's final answer to it
   * (claude --json-schema, codex --output-schema); troupe validates the output either way.
   */
  outputSchema?: Record<string, unknown> | null;
  /** What is left of the task's `budget.usd`, for a CLI that stops itself there (claude). */
  maxBudgetUsd?: number | null;
  /**
   * The agent's next stage will likely resume this conversation (`resume: true`): a runtime may
   * keep its process up to serve it (claude-stream-session.ts).
   */
  keepSession?: boolean;
}

export type RuntimeEvent =
  | { type: 'text'; text: string }
  | { type: 'thinking'; text: string }
  | { type: 'tool_start'; id: string; name: string; input?: unknown }
  | { type: 'tool_result'; id: string; output: string; isError?: boolean }
  /** The CLI's own conversation id: pass it back as `resumeSessionId` to continue. */
  | { type: 'session'; id: string }
  /** Tokens used so far (where the runtime reports them before the end). */
  | { type: 'usage'; usage: Usage }
  /**
   * Something worth showing that is not output. `info`: a retry the CLI makes by itself.
   * `warning`: what the user must see (the executor records it as `stage_warning`): a refused
   * tool call, a skipped settings file, a rate-limit warning.
   */
  | { type: 'notice'; level: 'info' | 'warning'; message: string }
  | {
      type: 'result';
      text: string;
      usage: Usage;
      meta?: Record<string, string | number | boolean>;
    };

export interface Runtime {
  readonly name: string;
  /** Yields events and ends with exactly one `result`; throws RuntimeError on failure. */
  run(request: RuntimeRequest): AsyncIterable<RuntimeEvent>;
}

export type RuntimeErrorKind =
  | 'rate_limited'
  | 'usage_limit'
  | 'quota_billing'
  | 'auth'
  | 'network'
  | 'overloaded'
  | 'untrusted_directory'
  | 'missing_cli'
  | 'context_overflow'
  | 'timeout'
  | 'permission_denied'
  | 'cancelled'
  | 'script_missing'
  /** A resume id the CLI no longer knows: run again without `resumeSessionId`. */
  | 'session_not_found'
  /** The CLI stopped at the budget troupe gave it (claude --max-budget-usd): the task's is spent. */
  | 'budget'
  | 'crashed';

const RETRYABLE: ReadonlySet<RuntimeErrorKind> = new Set([
  'rate_limited',
  'network',
  'overloaded',
  'timeout',
]);

/** A kind worth trying again: the same call may well succeed later (engine/plan/retry-policy.ts says when). */
export function isRetryable(kind: RuntimeErrorKind): boolean {
  return RETRYABLE.has(kind);
}

export class RuntimeError extends TroupeError {
  readonly code = 'runtime_error';
  constructor(
    readonly kind: RuntimeErrorKind,
    message: string,
    readonly options: {
      resetAt?: Date;
      partialOutput?: string;
      meta?: Record<string, string | number | boolean>;
      hint?: string;
    } = {},
  ) {
    super(message, options.hint ? { hint: options.hint } : undefined);
  }

  get retryable(): boolean {
    return isRetryable(this.kind);
  }

  get resetAt(): Date | undefined {
    return this.options.resetAt;
  }
}

export const ZERO_USAGE: Usage = { input_tokens: 0, output_tokens: 0 };
