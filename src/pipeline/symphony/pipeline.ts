import { stringify } from 'yaml';
import type { Pipeline } from '../../core/pipeline.js';
import type { Effort, Permissions } from '../../core/pipeline-vocabulary.js';
import { DiagnosticSink, toPipelineError } from '../diagnostics.js';
import { compilePipeline } from '../load.js';
import type { SymphonySettings, Workflow } from './workflow.js';

/**
 * A WORKFLOW.md as a troupe pipeline: one agent that runs codex with the rendered prompt as its
 * whole prompt. The prompt is rendered per issue (liquid.ts) and given as the task's input, so
 * the agent's template is `{{ input }}`: issue text reaches codex as data and is never parsed by
 * troupe's own templates. The tracker, polling, hooks and agent limits are not part of a pipeline;
 * they stay in `SymphonySettings` for `troupe watch`.
 */

/** How one WORKFLOW.md setting carries over: as it is, differently, or not (yet). */
export interface SettingMapping {
  kind: 'same' | 'differs' | 'unsupported';
  what: string;
}

export const SYMPHONY_AGENT_ID = 'codex';

/** The pipeline file for a workflow, and how each of its settings carried over. */
export function workflowPipelineYaml(workflow: Workflow): { yaml: string; mapping: SettingMapping[] } {
  const { codex } = workflow.settings;
  const mapping: SettingMapping[] = [];
  const same = (what: string) => mapping.push({ kind: 'same', what });
  const differs = (what: string) => mapping.push({ kind: 'differs', what });
  const unsupported = (what: string) => mapping.push({ kind: 'unsupported', what });

  const agent: Record<string, unknown> = { id: SYMPHONY_AGENT_ID };
  const runtime = codexRuntime(codex.command);
  if (runtime.runtime === 'codex') {
    agent.runtime = 'codex';
    differs(
      `codex.command \`${codex.command}\`: troupe's codex runtime (\`codex exec\`, one turn per stage)${runtime.dropped ? `; \`${runtime.dropped}\` is not passed on` : ''}`,
    );
  } else {
    agent.runtime = 'command';
    agent.command = runtime.argv;
    differs(
      `codex.command \`${codex.command}\`: runs as \`runtime: command\` through bash -lc; it gets the prompt in TROUPE_PROMPT_FILE, not over the app-server protocol`,
    );
  }
  if (codex.model) {
    agent.model = codex.model;
    same(`codex.model \`${codex.model}\` → model`);
  }
  const effort = codexEffort(codex.reasoning_effort);
  if (effort) {
    agent.effort = effort;
    (effort === codex.reasoning_effort ? same : differs)(
      `codex.reasoning_effort \`${codex.reasoning_effort}\` → effort: ${effort}`,
    );
  } else if (codex.reasoning_effort)
    unsupported(`codex.reasoning_effort \`${codex.reasoning_effort}\`: unknown`);
  const permissions = sandboxPermissions(codex.thread_sandbox);
  if (permissions) {
    agent.permissions = permissions;
    differs(
      `codex.thread_sandbox \`${codex.thread_sandbox}\` → permissions: ${permissions} (troupe sets codex's sandbox and approvals from it; approval_policy and turn_sandbox_policy are not passed on)`,
    );
  } else
    unsupported(
      `codex.thread_sandbox \`${codex.thread_sandbox}\`: unknown, troupe's default permissions apply`,
    );
  agent.timeout = Math.ceil(codex.turn_timeout_ms / 1000);
  same(`codex.turn_timeout_ms ${codex.turn_timeout_ms} → timeout: ${agent.timeout} (seconds)`);
  agent.context_strategy = 'none';
  agent.system_prompt = '{{ input }}';
  same(
    'the prompt: rendered per issue with the same strict Liquid (issue.*, attempt) and given to the agent whole',
  );
  unsupported(
    'codex.read_timeout_ms: troupe does not speak the app-server protocol, so there is no read timeout',
  );
  differs(
    `codex.stall_timeout_ms ${codex.stall_timeout_ms}, agent.max_retry_backoff_ms: kept for \`troupe watch\` (stalls and retries of an issue are the watcher's)`,
  );
  const maxTurns = workflow.settings.agent.max_turns;
  differs(
    `agent.max_turns ${maxTurns}: \`troupe watch\` gives an issue still active when its task completes another turn 1 s later, up to ${maxTurns} in a row, then stops with one line in its log and the issue's comment; each turn is a new task (one \`codex exec\`, the whole prompt with attempt one higher, not guidance on the same thread) on a branch started from the previous turn's, in a new worktree (after_create runs again), and after the last one Symphony would start another run where troupe stops`,
  );
  same(
    'tracker (assignee too: only its issues are candidates), polling, agent.max_concurrent_agents(_by_state): kept as they are for `troupe watch` (secrets stay $VAR)',
  );
  differs(
    `hooks: run by \`troupe watch\` with sh -lc (timeout_ms ${workflow.settings.hooks.timeout_ms}) in the issue's task worktree: after_create when it is made, before_run and after_run around each attempt, before_remove when a terminal issue's worktree is removed (its branch stays)${workflow.settings.hooks.after_create ? '; the worktree exists before after_create runs, so a part of it that makes its own checkout at $PWD (git clone, git worktree add) fails: drop it' : ''}`,
  );
  differs(
    `workspace.root \`${workflow.settings.workspace.root}\`: each issue works in a git worktree of its own (.troupe/worktrees/<task>) rather than a directory under it`,
  );
  for (const ignored of workflow.ignored) unsupported(`${ignored.key}: ${ignored.why}`);

  const document = {
    workspace: { isolation: 'worktree', merge: 'never' },
    agents: [agent],
  };
  const header = `# from ${workflow.file.split(/[\\/]/).pop()} (Symphony): its prompt is rendered per issue by \`troupe watch\` and given as the input\n`;
  return { yaml: `${header}${stringify(document)}`, mapping };
}

/** The pipeline of a workflow, compiled and checked as any pipeline file is. */
export function workflowPipeline(workflow: Workflow, name: string): Pipeline {
  const sink = new DiagnosticSink();
  const compiled = compilePipeline(
    workflowPipelineYaml(workflow).yaml,
    '<inline>',
    { name, requireParams: false },
    sink,
  );
  if (!compiled || sink.hasErrors) throw toPipelineError(sink.errors());
  return { ...compiled.pipeline, file: workflow.file };
}

/**
 * `codex app-server …` and `codex exec …` are what troupe's codex runtime runs; any other
 * command runs as `runtime: command`, as Symphony runs it (bash -lc).
 */
export function codexRuntime(
  command: string,
): { runtime: 'codex'; dropped: string | null } | { runtime: 'command'; argv: string[] } {
  const words = command.trim().split(/\s+/);
  if (words[0] === 'codex' && (words[1] === 'app-server' || words[1] === 'exec')) {
    const rest = words.slice(2).join(' ');
    return { runtime: 'codex', dropped: rest === '' ? null : rest };
  }
  return { runtime: 'command', argv: ['bash', '-lc', command] };
}

function codexEffort(effort: string | null): Effort | null {
  switch (effort?.trim().toLowerCase()) {
    case 'minimal':
    case 'low':
      return 'low';
    case 'medium':
      return 'medium';
    case 'high':
      return 'high';
    case 'xhigh':
      return 'max';
    default:
      return null;
  }
}

function sandboxPermissions(sandbox: SymphonySettings['codex']['thread_sandbox']): Permissions | null {
  switch (sandbox) {
    case 'read-only':
      return 'read_only';
    case 'workspace-write':
      return 'edit';
    case 'danger-full-access':
      return 'full';
    default:
      return null;
  }
}
