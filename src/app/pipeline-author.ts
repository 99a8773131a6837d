import { readFileSync } from 'node:fs';
import path from 'node:path';
import { AuthoringError, UsageError } from '../core/errors.js';
import type { Pipeline, RuntimeName } from '../core/pipeline.js';
import type { Runtime } from '../core/runtime.js';
import { CLI_RUNTIMES, spellList } from '../core/runtimes.js';
import { invokeRuntime } from '../engine/execute/run-support.js';
import { packageRoot } from '../package-root.js';
import { type ProjectConfig, timeoutFor } from '../pipeline/config.js';
import { type Diagnostic, formatDiagnostic } from '../pipeline/diagnostics.js';
import { resolvePipeline } from '../pipeline/discover.js';
import { extractYaml } from '../pipeline/extract-yaml.js';
import { pipelineJsonSchema } from '../pipeline/json-schema.js';
import { type ValidateOptions, validatePipelineFile, validatePipelineText } from '../pipeline/validate.js';
import { runtimeFor } from '../runtimes/registry.js';
import { loadScript } from '../runtimes/script.js';

/**
 * `troupe pipeline create --ai`: an agent writes a pipeline from a request; troupe validates
 * each reply as `troupe validate` would and sends the diagnostics back, for at most `rounds`
 * rounds. Nothing is written here: the caller saves what comes back.
 */

export interface AuthorRequest {
  /** What the team should do, in the user's words. */
  request: string;
  /** Where the pipeline will be saved: diagnostics name this file. */
  file: string;
  runtime: Runtime;
  /** The runtimes this machine can run, for the agents of the pipeline. */
  agentRuntimes: readonly string[];
  cwd: string;
  timeoutMs: number;
  signal?: AbortSignal;
  validate?: ValidateOptions;
  /** Default 3. */
  rounds?: number;
  /** Told after each reply is validated. */
  onRound?: (round: AuthorRound) => void;
}

export interface AuthorRound {
  round: number;
  /** What the agent was sent. */
  prompt: string;
  yaml: string;
  /** Errors and warnings of this round's reply. */
  diagnostics: Diagnostic[];
  /** Its errors go back to the agent for another round. */
  retrying: boolean;
}

export interface AuthoredPipeline {
  yaml: string;
  pipeline: Pipeline;
  rounds: AuthorRound[];
}

export const AUTHOR_AGENT_ID = 'author';
const EXAMPLES = ['dev-team', 'design-session'];

export async function authorPipeline(req: AuthorRequest): Promise<AuthoredPipeline> {
  const maxRounds = req.rounds ?? 3;
  const rounds: AuthorRound[] = [];
  const previousMeta: Array<Record<string, string | number | boolean>> = [];
  const signal = req.signal ?? new AbortController().signal;
  const first = firstPrompt(req);
  let prompt = first;
  for (let round = 1; round <= maxRounds; round++) {
    const result = await invokeRuntime(
      signal,
      req.runtime,
      {
        agentId: AUTHOR_AGENT_ID,
        purpose: 'stage',
        prompt,
        systemPrompt: '',
        model: null,
        effort: null,
        cwd: req.cwd,
        mcp: [],
        extraFlags: [],
        timeoutMs: req.timeoutMs,
        signal,
        resumeSessionId: null,
        previousMeta: [...previousMeta],
        permissions: 'read_only',
      },
      () => {},
    );
    previousMeta.push(result.meta ?? {});
    const yaml = extractYaml(result.text);
    const checked = validatePipelineText(yaml, req.file, req.validate);
    const done: AuthorRound = {
      round,
      prompt,
      yaml,
      diagnostics: checked.diagnostics,
      retrying: !checked.pipeline && round < maxRounds,
    };
    rounds.push(done);
    req.onRound?.(done);
    if (checked.pipeline) return { yaml, pipeline: checked.pipeline, rounds };
    prompt = retryPrompt(first, done);
  }
  const errors = rounds.at(-1)!.diagnostics.filter((d) => d.severity === 'error');
  const { hint: _, ...firstError } = errors[0]!;
  throw new AuthoringError(
    `the agent's pipeline still has ${errors.length} error${errors.length === 1 ? '' : 's'} after ${maxRounds} rounds; nothing was written`,
    { hint: `last round: ${formatDiagnostic(firstError)}` },
  );
}

function firstPrompt(req: AuthorRequest): string {
  const examples = EXAMPLES.map((name) => {
    const text = readFileSync(path.join(packageRoot(), 'examples', name, 'agents.yaml'), 'utf8');
    return `Example (${name}):\n\`\`\`yaml\n${text.trimEnd()}\n\`\`\``;
  });
  return [
    'Write a troupe pipeline (agents.yaml) for this team:',
    '',
    req.request,
    '',
    'Rules:',
    '- Reply with the whole file in one ```yaml block and nothing else.',
    '- Start it with `apiVersion: troupe/v1` and a one-line comment saying what the team does.',
    '- Every system_prompt must contain {{ input }}: it is how an agent gets its work.',
    `- Use only these runtimes for the agents: ${req.agentRuntimes.join(', ')}. Put reviewers on another runtime than the writers when there are two.`,
    '- Keep it small: the fewest agents that do the job; a gate where work should be checked.',
    '',
    'The file must match this JSON Schema:',
    JSON.stringify(pipelineJsonSchema()),
    '',
    ...examples,
  ].join('\n');
}

/** The first prompt again (a CLI call keeps no conversation), the last reply, and what was wrong with it. */
function retryPrompt(first: string, last: AuthorRound): string {
  const errors = last.diagnostics.filter((d) => d.severity === 'error');
  return [
    first,
    '',
    `Your previous reply (round ${last.round}):`,
    `\`\`\`yaml\n${last.yaml.trimEnd()}\n\`\`\``,
    '',
    '`troupe validate` found these errors in it:',
    ...errors.map(formatDiagnostic),
    '',
    'Fix every error and reply with the whole corrected file in one ```yaml block.',
  ].join('\n');
}

/** What `pipeline create --ai` asks for in a project. */
export interface ProjectAuthorRequest {
  request: string;
  file: string;
  /** Who writes (default: the runtime of the project's default pipeline's entry agent, else claude). */
  runtime?: RuntimeName;
  /** Scripted replies for the writing agent (`agents.author`). */
  script?: string;
  validate?: ValidateOptions;
  onRound?: (round: AuthorRound) => void;
}

/**
 * authorPipeline in a project: the writing agent on its runtime (or the script) with the
 * config's timeout, told to use the runtimes the project already uses.
 */
export function authorProjectPipeline(
  root: string,
  config: ProjectConfig,
  req: ProjectAuthorRequest,
): Promise<AuthoredPipeline> {
  const used = projectRuntimes(root, config);
  const writer = req.runtime ?? used[0] ?? 'claude';
  const script = req.script ? loadScript(req.script) : null;
  const configScript = config.script ? loadScript(path.join(root, config.script)) : null;
  if (writer === 'scripted' && !(script ?? configScript)?.agents[AUTHOR_AGENT_ID]?.length)
    throw new UsageError(
      "--ai needs an agent to write the pipeline, and this project's team is scripted (no agent CLI was found)",
      {
        hint: `install ${spellList(CLI_RUNTIMES)} (then \`troupe init --force\`), start from a template (\`--template NAME\`, \`--list-templates\`), or give \`--script\` with replies for \`author\``,
      },
    );
  return authorPipeline({
    request: req.request,
    file: req.file,
    runtime: runtimeFor(writer, script, configScript, { trustWorkspace: config.trust_workspace }),
    agentRuntimes: used.length > 0 ? used : writer === 'scripted' ? ['claude', 'gemini'] : [writer],
    cwd: root,
    timeoutMs: timeoutFor(config, writer) * 1000,
    ...(req.validate ? { validate: req.validate } : {}),
    ...(req.onRound ? { onRound: req.onRound } : {}),
  });
}

/**
 * The runtimes the project already uses (its default pipeline's agents, as `troupe init` set
 * them up), first the entry agent's; none when it has no pipeline that loads.
 */
export function projectRuntimes(root: string, config: ProjectConfig): RuntimeName[] {
  try {
    const found = resolvePipeline(root, {}, config);
    const pipeline = validatePipelineFile(found.file, { name: found.name }).pipeline;
    const runtimes = (pipeline?.agents ?? []).flatMap((a) => (a.type === 'agent' ? [a.runtime] : []));
    return [...new Set(runtimes)].filter((r) => r !== 'command');
  } catch {
    return [];
  }
}
