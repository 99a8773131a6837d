import {
  type AgentBase,
  type Chunks,
  DEFAULT_RETRY,
  type Handoff,
  type HumanInput,
  type McpServer,
  type PipelineNode,
  PLAN_DEFAULTS,
} from '../core/pipeline.js';
import { RUNTIME_NAMES } from '../core/runtimes.js';
import type { DiagnosticSink } from './diagnostics.js';
import { type LocatedAgent, positionOf } from './located-agent.js';
import type { RawHumanInput, RawMcpServer } from './schema.js';

/**
 * The engine's node for a raw agent (after extends): shorthands expanded and every default filled.
 * An agent without a runtime is reported and yields undefined.
 */
export function toNode(agent: LocatedAgent, sink: DiagnosticSink): PipelineNode | undefined {
  const { raw } = agent;
  const base: AgentBase = {
    id: raw.id,
    name: raw.name || displayName(raw.id),
    handoffs: (raw.handoffs ?? []).map(
      (h): Handoff => ({
        to: splitTargets(h.to),
        task: h.task ?? '',
        condition: h.condition ?? 'always',
        payload: h.payload ?? '{{ output }}',
      }),
    ),
    context_strategy: raw.context_strategy ?? 'both',
    context_window: raw.context_window ?? 3,
    ...(raw.on_conflict ? { on_conflict: raw.on_conflict } : {}),
    source: positionOf(agent),
  };
  const chunks: Chunks | null = raw.chunks
    ? { enabled: raw.chunks.enabled ?? true, initial: raw.chunks.initial ?? [] }
    : null;

  if (raw.type === 'session') {
    const consensus = raw.consensus ?? {};
    return {
      ...base,
      type: 'session',
      participants: raw.participants ?? [],
      turn_order: raw.turn_order ?? 'round_robin',
      max_rounds: raw.max_rounds ?? 10,
      consensus: {
        method: consensus.method ?? 'vote',
        keyword: consensus.keyword ?? 'VOTE: AGREE',
        require: consensus.require ?? 'all',
        require_chunks_done: consensus.require_chunks_done ?? false,
      },
      summary_agent: raw.summary_agent ?? null,
      chunks,
      system_prompt: raw.system_prompt ?? '',
    };
  }

  if (!raw.runtime) {
    sink.error(
      positionOf(agent),
      `agent \`${raw.id}\` has no runtime`,
      `add \`runtime: ${RUNTIME_NAMES.join(' | ')}\`${raw.extends ? ` (here or in \`${raw.extends}\`)` : ''}, or \`abstract: true\` if it is only a base for others`,
    );
    return undefined;
  }
  if (raw.runtime === 'command' && !raw.command?.length) {
    sink.error(
      positionOf(agent, 'runtime'),
      `agent \`${raw.id}\` has runtime command but no \`command\``,
      'add `command: [program, arg…]`, for example `command: [npm, test]`',
    );
    return undefined;
  }
  if (raw.runtime === 'mailbox' && !mailboxHandleOk(agent, sink)) return undefined;
  const gate = raw.gate;
  return {
    ...base,
    type: 'agent',
    runtime: raw.runtime,
    model: raw.model ?? null,
    system_prompt: raw.system_prompt ?? '',
    gate: gate
      ? {
          type: gate.type ?? 'llm',
          prompt: gate.prompt ?? '',
          model: gate.model ?? null,
          max_retries: gate.max_retries ?? 3,
          command: gate.command ?? null,
          timeout: gate.timeout ?? null,
          runtime: gate.runtime ?? null,
          verifier: gate.verifier ?? null,
        }
      : null,
    mcp: (raw.mcp ?? []).map(mcpServer),
    // aqm: the deprecated spelling is read only when cli_flags is not set
    cli_flags: raw.cli_flags ?? raw.claude_code_flags ?? [],
    human_input: humanInput(raw.human_input),
    retry: raw.retry
      ? {
          max_retries: raw.retry.max_retries ?? DEFAULT_RETRY.max_retries,
          fallback_context_strategy: raw.retry.fallback_context_strategy ?? null,
          backoff: raw.retry.backoff ?? DEFAULT_RETRY.backoff,
        }
      : null,
    timeout: raw.timeout ?? null,
    chunks,
    permissions: raw.permissions ?? null,
    effort: raw.effort ?? null,
    resume: raw.resume ?? false,
    fallback: (raw.fallback ?? []).map((f) => ({ runtime: f.runtime, model: f.model ?? null })),
    command: raw.command ?? null,
    ...(raw.runtime === 'mailbox' ? { handle: raw.handle ?? null } : {}),
    spec: raw.spec ?? 'none',
    // a file path is read by resolveOutputSchemas (load.ts), which reports it where it was written
    output_schema: typeof raw.output_schema === 'object' ? (raw.output_schema ?? null) : null,
    openai: raw.openai
      ? { base_url: raw.openai.base_url ?? null, api_key_env: raw.openai.api_key_env ?? null }
      : null,
    ...(raw.worker_labels?.length ? { worker_labels: [...new Set(raw.worker_labels)].sort() } : {}),
    ...(raw.plan
      ? {
          plan: {
            // with `pipeline:`, its first agent (load.ts, after sub-pipelines are read)
            worker: raw.plan.worker ?? '',
            verifier: raw.plan.verifier ?? null,
            max_rounds: raw.plan.max_rounds ?? PLAN_DEFAULTS.max_rounds,
            concurrency: raw.plan.concurrency ?? PLAN_DEFAULTS.concurrency,
            replans: raw.plan.replans ?? PLAN_DEFAULTS.replans,
            checks: raw.plan.checks ?? PLAN_DEFAULTS.checks,
          },
        }
      : {}),
  };
}

/**
 * A mailbox agent needs the handle its stages are mailed to, and not its own: the stage is
 * mailed from the agent's mailbox (its id), and a reply to oneself would be no one's.
 */
function mailboxHandleOk(agent: LocatedAgent, sink: DiagnosticSink): boolean {
  const { raw } = agent;
  if (!raw.handle) {
    sink.error(
      positionOf(agent, 'runtime'),
      `agent \`${raw.id}\` has runtime mailbox but no \`handle\``,
      'add `handle: <who answers on the bus>`, for example `handle: codex` or `handle: user`',
    );
    return false;
  }
  if (raw.handle === raw.id.toLowerCase()) {
    sink.error(
      positionOf(agent, 'handle'),
      `agent \`${raw.id}\` would mail its stages to itself (handle \`${raw.handle}\`)`,
      'name the agent after its role (reviewer) and the handle after who answers (codex, user)',
    );
    return false;
  }
  if (raw.gate && (raw.gate.type ?? 'llm') === 'llm' && !raw.gate.runtime) {
    sink.warning(
      positionOf(agent, 'gate'),
      `agent \`${raw.id}\`'s llm gate would run on runtime mailbox, which runs nothing`,
      'give the gate a `runtime:` (for example `gate: {type: llm, runtime: claude}`), unless config `gate.runtime` sets one',
    );
  }
  return true;
}

/** aqm's name for an id: `code_reviewer` → "Code Reviewer" (Python's str.title()). */
export function displayName(id: string): string {
  return id
    .replace(/[_-]/g, ' ')
    .replace(/[A-Za-z]+/g, (word) => word[0]!.toUpperCase() + word.slice(1).toLowerCase());
}

/** `"qa, docs"` → `['qa', 'docs']`; empty entries are kept so the checks can point at them. */
function splitTargets(to: string): string[] {
  return to.split(',').map((t) => t.trim());
}

function mcpServer(entry: RawMcpServer): McpServer {
  return typeof entry === 'string'
    ? { server: entry, command: null, args: [], env: null }
    : {
        server: entry.server,
        command: entry.command ?? null,
        args: entry.args ?? [],
        env: entry.env ?? null,
        ...(entry.url
          ? { url: entry.url, headers: entry.headers ?? null, transport: entry.transport ?? 'http' }
          : {}),
      };
}

function humanInput(raw: RawHumanInput | null | undefined): HumanInput | null {
  if (raw === undefined || raw === null) return null;
  if (raw === true) return { enabled: true, mode: 'on_demand', prompt: '' };
  if (typeof raw === 'string') return { enabled: true, mode: raw, prompt: '' };
  return { enabled: raw.enabled ?? true, mode: raw.mode ?? 'on_demand', prompt: raw.prompt ?? '' };
}
