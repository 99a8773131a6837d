import type { Usage } from '../engine/events.js';
import { TroupeError } from '../errors.js';
import type { McpServer } from '../pipeline/types.js';

/**
 * One interface for every way an agent's work gets done: the CLIs people pay for, an
 * OpenAI-compatible endpoint, or the scripted runtime. A runtime turns a request into a
 * stream of events and reports failure as a RuntimeError with a stable kind.
 */

export type Effort = 'low' | 'medium' | 'high' | 'max';

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
}

export type RuntimeEvent =
  | { type: 'text'; text: string }
  | { type: 'thinking'; text: string }
  | { type: 'tool_start'; id: string; name: string; input?: unknown }
  | { type: 'tool_result'; id: string; output: string; isError?: boolean }
  | { type: 'session'; id: string }
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
  | 'crashed';

const RETRYABLE: ReadonlySet<RuntimeErrorKind> = new Set([
  'rate_limited',
  'network',
  'overloaded',
  'timeout',
]);

export class RuntimeError extends TroupeError {
  readonly code = 'runtime_error';
  constructor(
    readonly kind: RuntimeErrorKind,
    message: string,
    readonly options: {
      resetAt?: Date;
      partialOutput?: string;
      meta?: Record<string, string | number | boolean>;
    } = {},
  ) {
    super(message);
  }

  get retryable(): boolean {
    return RETRYABLE.has(this.kind);
  }

  get resetAt(): Date | undefined {
    return this.options.resetAt;
  }
}

export const ZERO_USAGE: Usage = { input_tokens: 0, output_tokens: 0 };
