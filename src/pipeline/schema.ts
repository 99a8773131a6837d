import { z } from 'zod';
import { DEFAULT_RETRY, PLAN_DEFAULTS, WORKER_LABEL } from '../core/pipeline.js';
import {
  CONDITION_KEYWORDS,
  CONTEXT_STRATEGIES,
  EFFORTS,
  GATE_TYPES,
  HUMAN_INPUT_MODES,
  PERMISSIONS,
} from '../core/pipeline-vocabulary.js';
import { GATE_RUNTIMES, RUNTIME_NAMES } from '../core/runtimes.js';

// Each schema here is parsed a few times per process: zod's JIT (a function generated for each
// object schema on its first parse) costs more than it saves, ~5 ms of `troupe validate`.
z.config({ jitless: true });

/**
 * The raw `agents.yaml` exactly as written: aqm's format (every object strict, so a typo such as
 * `sytem_prompt` is an error rather than silently dropped) plus troupe's additions. Defaults live
 * in `normalize.ts`, not here: `extends` merges raw agents, and a filled-in default on a child
 * would hide the parent's value. The defaults still reach editors through `.meta({ default })`.
 */

export const API_VERSIONS = ['aqm/v0.1', 'troupe/v1'] as const;
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const AGENT_ID = /^[a-zA-Z_][a-zA-Z0-9_-]*$/;
export const PARAM_NAME = /^[a-zA-Z_][a-zA-Z0-9_-]*$/;

const agentId = z.string().regex(AGENT_ID, {
  error: 'an id must start with a letter or _ and contain only letters, digits, _ and -',
});
const seconds = z.number().positive();
const workerLabel = z.string().regex(WORKER_LABEL, {
  error: 'a worker label is lower-case letters and digits, words joined by single dashes (gpu, eu-west)',
});
const template = z.string();

export const HandoffSchema = z
  .strictObject({
    to: z
      .string()
      .min(1)
      .meta({ description: 'Target agent id; a comma list ("qa, docs") fans out; "*" with auto.' }),
    task: z.string().optional().meta({ description: 'A label for the handoff.', default: '' }),
    condition: z
      .union([z.enum(CONDITION_KEYWORDS), z.string().min(1)], {
        error: `a condition is one of ${CONDITION_KEYWORDS.join(', ')} or an expression such as "severity == critical"`,
      })
      .optional()
      .meta({ default: 'always' }),
    payload: template
      .optional()
      .meta({ description: "Template for the next agent's input.", default: '{{ output }}' }),
  })
  .meta({ title: 'Handoff' });

export const GateSchema = z
  .strictObject({
    type: z.enum(GATE_TYPES).optional().meta({ default: 'llm' }),
    prompt: template.optional().meta({ description: 'Template with output, input and params.', default: '' }),
    model: z.string().nullish().meta({ description: 'Model for an llm gate; null uses config gate.model.' }),
    runtime: z.enum(GATE_RUNTIMES).nullish().meta({
      description:
        "Runtime of an llm gate (Claude writes, Gemini reviews); null uses config gate.runtime, else the agent's own.",
    }),
    max_retries: z.number().int().min(1).optional().meta({ default: 3 }),
    command: z
      .string()
      .min(1)
      .nullish()
      .meta({ description: "type command: shell command run in the task's directory; exit 0 approves." }),
    timeout: seconds.nullish().meta({ description: 'Seconds; null uses config gate.timeout.' }),
    verifier: agentId.nullish().meta({
      description:
        "troupe: the agent that judges (worker != tester). It runs in a fresh checkout of the worker's commit, on its own runtime and model.",
    }),
  })
  .superRefine((gate, ctx) => {
    if (gate.type === 'command' && !gate.command) {
      ctx.addIssue({
        code: 'custom',
        path: ['command'],
        message: 'a gate of type command needs a `command`',
      });
    }
  })
  .meta({ title: 'Gate' });

export const McpServerSchema = z.union(
  [
    z.string().min(1),
    z
      .strictObject({
        server: z.string().min(1),
        command: z.string().nullish(),
        args: z.array(z.string()).optional().meta({ default: [] }),
        env: z.record(z.string(), z.string()).nullish(),
        url: z
          .url({ protocol: /^https?$/, error: 'url is an http(s) URL such as https://mcp.example.com/mcp' })
          .nullish()
          .meta({ description: 'A remote MCP server (streamable HTTP, or SSE with transport: sse).' }),
        headers: z.record(z.string(), z.string()).nullish(),
        transport: z.enum(['http', 'sse']).nullish().meta({ default: 'http' }),
      })
      .refine((s) => !(s.url && (s.command || s.args?.length || s.env)), {
        error: 'an mcp server has a `url` or a `command` (with args and env), not both',
      })
      .refine((s) => s.url || (!s.headers && !s.transport), {
        error: '`headers` and `transport` are for an mcp server with a `url`',
      }),
  ],
  { error: 'an mcp entry is a server name or a mapping with `server`' },
);

export const OpenAiSchema = z
  .strictObject({
    base_url: z.url({ error: 'base_url is a URL such as http://localhost:11434/v1' }).nullish().meta({
      description:
        'OpenAI-compatible endpoint (Ollama, vLLM, LM Studio…); default https://api.openai.com/v1.',
    }),
    api_key_env: z
      .string()
      .regex(ENV_NAME, { error: 'api_key_env names an environment variable, such as OPENAI_API_KEY' })
      .nullish()
      .meta({
        description:
          'Environment variable holding the key (never the key itself). Without it, OPENAI_API_KEY is sent only to api.openai.com.',
      }),
  })
  .meta({ title: 'OpenAiEndpoint' });

export const PlanSettingsSchema = z
  .strictObject({
    worker: agentId.optional().meta({
      description: 'The agent that runs each piece, in the piece’s own worktree (or `pipeline:`, not both).',
    }),
    pipeline: z.string().min(1).optional().meta({
      description:
        'A project pipeline (a name in .troupe/pipelines/, or a file relative to this one) that runs each piece: its first agent starts the piece, its handoffs run inside it, and the piece is verified when its chain ends (or `worker:`, not both).',
    }),
    verifier: agentId.nullish().meta({
      description: "The agent that judges each piece's commit in a fresh checkout (worker != tester).",
    }),
    max_rounds: z.number().int().min(0).optional().meta({
      description:
        'A plan that does not validate goes back to the planner with the errors at most this many times.',
      default: PLAN_DEFAULTS.max_rounds,
    }),
    concurrency: z.number().int().min(1).max(64).optional().meta({
      description: 'Pieces worked on at once; each stage also waits its turn under the provider `limits:`.',
      default: PLAN_DEFAULTS.concurrency,
    }),
    replans: z.number().int().min(0).optional().meta({
      description:
        'A piece that failed sends the rest of the plan back to the planner at most this many times (finished pieces stay merged).',
      default: PLAN_DEFAULTS.replans,
    }),
    checks: z.enum(['run', 'verifier']).optional().meta({
      description:
        "run: each piece's acceptance checks run through the shell as a command gate (the planner's output reaches a shell); verifier: only the verifier reads them.",
      default: PLAN_DEFAULTS.checks,
    }),
  })
  .meta({
    title: 'Plan',
    description:
      'troupe: this agent is a planner. Its output is a plan (schema/plan.schema.json) whose pieces run as a graph: each in its own worktree once its dependencies are merged, verified, and merged in dependency order (docs/task-graphs.md).',
  });

export const RetrySchema = z
  .strictObject({
    max_retries: z.number().int().min(0).optional().meta({
      description:
        'Runs again after a retryable failure (network, overloaded, timeout; with retry: also a crash); kinds such as auth are never retried. 0: none.',
      default: DEFAULT_RETRY.max_retries,
    }),
    fallback_context_strategy: z.enum(CONTEXT_STRATEGIES).nullish(),
    backoff: z.number().min(0).optional().meta({
      description: 'Seconds before the first retry; each next one waits twice as long (at most 5 minutes).',
      default: DEFAULT_RETRY.backoff,
    }),
  })
  .meta({
    title: 'Retry',
    description: 'Runtime retries. Without `retry:`, the defaults apply.',
  });

export const HumanInputSchema = z
  .union(
    [
      z.literal(true),
      z.enum(HUMAN_INPUT_MODES),
      z.strictObject({
        enabled: z.boolean().optional().meta({ default: true }),
        mode: z.enum(HUMAN_INPUT_MODES).optional().meta({ default: 'on_demand' }),
        prompt: z.string().optional().meta({ default: '' }),
      }),
    ],
    {
      error:
        'human_input is true, "before", "on_demand", "both" or a mapping (false is not allowed: omit it)',
    },
  )
  .meta({ title: 'HumanInput' });

export const ConsensusSchema = z
  .strictObject({
    method: z.enum(['vote', 'moderator_decides']).optional().meta({ default: 'vote' }),
    keyword: z.string().min(1).optional().meta({ default: 'VOTE: AGREE' }),
    require: z.enum(['all', 'majority']).optional().meta({ default: 'all' }),
    require_chunks_done: z.boolean().optional().meta({ default: false }),
  })
  .meta({ title: 'Consensus' });

export const ChunksSchema = z
  .strictObject({
    enabled: z.boolean().optional().meta({ default: true }),
    initial: z.array(z.string()).optional().meta({ default: [] }),
  })
  .meta({ title: 'Chunks' });

export const AgentSchema = z
  .strictObject({
    id: agentId,
    name: z.string().optional().meta({ description: 'Display name; derived from the id when empty.' }),
    type: z.enum(['agent', 'session']).optional().meta({ default: 'agent' }),
    runtime: z
      .enum(RUNTIME_NAMES)
      .nullish()
      .meta({ description: 'Required for type agent (unless abstract).' }),
    model: z.string().nullish().meta({
      description:
        'auto: the runtime, model and effort of the tier routing: in config decides for each stage.',
    }),
    system_prompt: template.optional().meta({ default: '' }),
    handoffs: z.array(HandoffSchema).nullish().meta({ default: [] }),
    gate: GateSchema.nullish(),
    mcp: z.array(McpServerSchema).nullish().meta({ default: [] }),
    cli_flags: z.array(z.string()).nullish(),
    permissions: z.enum(PERMISSIONS).nullish().meta({
      description:
        'What the agent may do: read_only, edit (files) or full (anything, unasked). Default: edit inside a troupe worktree, read_only elsewhere. edit or full also gives tasks a worktree by default (see workspace.isolation).',
    }),
    effort: z
      .enum([...EFFORTS, 'auto'])
      .nullish()
      .meta({
        description:
          'Reasoning effort, mapped to each runtime’s own setting; auto: the routed tier’s (routing: in config).',
      }),
    resume: z.boolean().optional().meta({
      description: "Continue the CLI's conversation from this agent's previous stage in the task.",
      default: false,
    }),
    fallback: z
      .array(z.strictObject({ runtime: z.enum(GATE_RUNTIMES), model: z.string().nullish() }))
      .nullish()
      .meta({
        description:
          "troupe: where the agent's stage goes at once when its runtime is closed by a rate or usage limit, first open one first.",
      }),
    command: z
      .array(z.string().min(1))
      .min(1)
      .nullish()
      .meta({ description: 'runtime command: the argv to run (no shell); its stdout is the output.' }),
    handle: z
      .string()
      .regex(/^[a-z0-9_][a-z0-9_-]*$/, {
        error: 'a handle is lower-case letters, digits, _ and - (an AMQ handle)',
      })
      .nullish()
      .meta({
        description:
          "troupe, runtime mailbox: the bus handle (a live agent or a person, `user`) the stage's prompt is mailed to; the reply on the task's thread is the stage's output.",
      }),
    openai: OpenAiSchema.nullish(),
    claude_code_flags: z
      .array(z.string())
      .nullish()
      .meta({ deprecated: true, description: 'Use cli_flags.' }),
    spec: z.enum(['required', 'none']).optional().meta({
      description:
        'troupe: required — for tasks of size M or larger the output must hold a spec (a JSON object with requirements, files, verification; schema/spec.schema.json), else the stage goes back to the agent.',
      default: 'none',
    }),
    output_schema: z
      .union([z.string().min(1), z.record(z.string(), z.unknown())], {
        error: 'output_schema is a JSON Schema (a mapping) or the path of a file holding one',
      })
      .nullish()
      .meta({
        description:
          "troupe: a JSON Schema (inline, or a file path relative to the pipeline file) the output's JSON object must match, else the stage goes back to the agent.",
      }),
    worker_labels: z.array(workerLabel).optional().meta({
      description:
        "troupe, with workers on a shared queue: only a worker started with all these labels (troupe worker --labels) runs this agent's stages and LLM gates.",
    }),
    context_strategy: z.enum(CONTEXT_STRATEGIES).optional().meta({ default: 'both' }),
    context_window: z.number().int().min(0).optional().meta({ default: 3 }),
    human_input: HumanInputSchema.nullish(),
    retry: RetrySchema.nullish(),
    timeout: seconds.nullish().meta({ description: 'Seconds; overrides config timeouts.<runtime>.' }),
    abstract: z.boolean().optional().meta({ default: false }),
    extends: agentId.nullish().meta({ description: 'Id of the agent whose fields this one inherits.' }),
    participants: z.array(agentId).optional(),
    turn_order: z.enum(['round_robin', 'moderator']).optional().meta({ default: 'round_robin' }),
    max_rounds: z.number().int().min(1).optional().meta({ default: 10 }),
    consensus: ConsensusSchema.nullish(),
    summary_agent: agentId.nullish(),
    chunks: ChunksSchema.nullish(),
    plan: PlanSettingsSchema.nullish(),
    on_conflict: agentId.nullish().meta({
      description:
        "troupe, on a join agent (the one fan-out branches hand off to): the agent that resolves a merge conflict between the branches, in the join's worktree. Without it a person is asked.",
    }),
  })
  .meta({ title: 'Agent' });

export const ParamDefinitionSchema = z.strictObject({
  type: z.enum(['string', 'number', 'boolean']).optional().meta({ default: 'string' }),
  default: z.unknown().optional(),
  required: z.boolean().optional().meta({ default: false }),
  description: z.string().optional().meta({ default: '' }),
  prompt: z.string().nullish(),
  auto_detect: z.string().nullish(),
});

export const ParamsSchema = z.record(
  z
    .string()
    .regex(PARAM_NAME, { error: 'a param name must start with a letter or _ (letters, digits, _, -)' }),
  z.union([ParamDefinitionSchema, z.string(), z.number(), z.boolean(), z.null()], {
    error: 'a param is a mapping (type, default, required, …) or a bare default value',
  }),
);

export const ImportSchema = z.strictObject({
  from: z.string().min(1).meta({ description: 'Path relative to the importing file.' }),
  agents: z.array(agentId).optional().meta({ description: 'Ids to import; empty or omitted imports all.' }),
});

export const WorkspaceSchema = z
  .strictObject({
    isolation: z.enum(['worktree', 'none']).optional().meta({
      description:
        'worktree: the task runs in its own git worktree on its own branch; none: in the directory it was started from. Default: worktree once `workspace:` is written; without it, worktree when the task starts inside a git repository and an agent has permissions edit or full, else none.',
    }),
    base: z
      .string()
      .min(1)
      .optional()
      .meta({ description: 'Branch or ref the task branch starts from (default: the checked-out branch).' }),
    merge: z.enum(['on_complete', 'manual', 'never']).optional().meta({
      description: 'When the task branch goes back into base: at completion, with `troupe merge`, or never.',
    }),
    branch_prefix: z
      .string()
      .regex(/^[A-Za-z0-9._/-]+$/)
      .optional()
      .meta({ default: 'troupe/' }),
    remote: z
      .string()
      .regex(/^[^\s-][^\s]*$/, {
        error: 'a git remote is a remote name (origin) or a URL, without spaces and not starting with -',
      })
      .optional()
      .meta({
        description:
          'Worktrees across machines (docs/workspaces.md): a remote name (origin) or URL. The task branch is fetched before each stage and pushed after it, so the next stage may run on any worker; merges into base are pushed there, one worker at a time.',
      }),
  })
  .refine((w) => w.remote === undefined || w.isolation !== 'none', {
    path: ['remote'],
    error: 'needs a worktree: remove isolation: none, or remove remote',
  })
  .meta({ description: 'troupe: where the task works (git worktree isolation) and how its work is merged.' });

export const PipelineSchema = z.strictObject({
  apiVersion: z.enum(API_VERSIONS).optional(),
  entry_point: z.enum(['first', 'auto']).optional().meta({ default: 'first' }),
  workspace: WorkspaceSchema.nullish(),
  budget: z
    .strictObject({
      tokens: z.number().int().positive().nullish(),
      usd: z.number().positive().nullish(),
    })
    .nullish()
    .meta({
      description:
        'troupe: per task; it stops cleanly (failed, reason budget) before the stage that would go past it.',
    }),
  params: ParamsSchema.nullish(),
  imports: z.array(ImportSchema).nullish(),
  agents: z.array(AgentSchema).min(1),
});

/** An imported file may also be a bare list of agents. */
export const AgentListSchema = z.array(AgentSchema);

export type RawPipeline = z.infer<typeof PipelineSchema>;
export type RawAgent = z.infer<typeof AgentSchema>;
export type RawHandoff = z.infer<typeof HandoffSchema>;
export type RawGate = z.infer<typeof GateSchema>;
export type RawMcpServer = z.infer<typeof McpServerSchema>;
export type RawHumanInput = z.infer<typeof HumanInputSchema>;
export type RawParamDefinition = z.infer<typeof ParamDefinitionSchema>;
export type RawParams = z.infer<typeof ParamsSchema>;
export type RawImport = z.infer<typeof ImportSchema>;
