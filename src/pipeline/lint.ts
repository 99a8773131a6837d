import { isCliRuntime, RUNTIMES, runtimesWith, spellList } from '../core/runtimes.js';
import { type CompiledPipeline, locate } from './compiled.js';
import type { DiagnosticSink } from './diagnostics.js';
import { warnEndlessLoops, warnEndlessRejectLoops, warnUnreachable } from './lint-graph.js';
import { isOnPath } from './on-path.js';
import type { RawAgent } from './schema.js';

export interface LintOptions {
  /** The PATH to look for runtime CLIs in; defaults to the process's. */
  pathEnv?: string;
  /** Project config `routing.tiers`, by name; undefined: not known (no routing check). */
  routingTiers?: string[];
}

// `chunks:` is not among them: on any node it turns a task's chunks on (engine/plan/chunks.ts)
const SESSION_ONLY: (keyof RawAgent)[] = [
  'participants',
  'turn_order',
  'max_rounds',
  'consensus',
  'summary_agent',
];
const AGENT_ONLY: (keyof RawAgent)[] = [
  'runtime',
  'model',
  'gate',
  'mcp',
  'cli_flags',
  'claude_code_flags',
  'human_input',
  'retry',
  'timeout',
  'permissions',
  'effort',
  'resume',
  'command',
  'openai',
  'spec',
  'output_schema',
];

/** Warnings only `troupe validate` reports: the pipeline loads, but probably not as meant. */
export function lintPipeline(
  compiled: CompiledPipeline,
  sink: DiagnosticSink,
  options: LintOptions = {},
): void {
  warnUnreachable(compiled, sink);
  warnEndlessRejectLoops(compiled, sink);
  warnEndlessLoops(compiled, sink);
  warnIgnoredFields(compiled, sink);
  warnMissingClis(compiled, sink, options.pathEnv);
  if (options.routingTiers) warnUnroutable(compiled, sink, options.routingTiers);
}

/** `model: auto` / `effort: auto` need tiers to route to (a task would be refused at start). */
function warnUnroutable(compiled: CompiledPipeline, sink: DiagnosticSink, tiers: string[]): void {
  if (tiers.length > 0) return;
  for (const node of compiled.pipeline.agents) {
    if (node.type !== 'agent') continue;
    const field = node.model === 'auto' ? 'model' : node.effort === 'auto' ? 'effort' : null;
    if (!field) continue;
    sink.warning(
      locate(compiled, node.id, field),
      `\`${node.id}\` has ${field}: auto, but .troupe/config.yaml has no routing tiers`,
      'add routing: {tiers: {fast: {runtime: gemini, model: gemini-2.5-flash}, deep: {runtime: claude, model: opus}}} (docs/routing.md)',
    );
  }
}

function warnIgnoredFields(compiled: CompiledPipeline, sink: DiagnosticSink): void {
  for (const node of compiled.pipeline.agents) {
    const raw = compiled.definitions.get(node.id)?.raw;
    if (!raw) continue;
    const ignored = node.type === 'session' ? AGENT_ONLY : SESSION_ONLY;
    for (const field of ignored) {
      if (raw[field] === undefined || raw[field] === null) continue;
      sink.warning(
        locate(compiled, node.id, field),
        `\`${field}\` is ignored on ${node.type === 'session' ? 'a session' : 'an agent'} (\`${node.id}\`)`,
        node.type === 'session' ? 'set it on the participants instead' : 'it only applies to `type: session`',
      );
    }
    if (raw.claude_code_flags && node.type === 'agent') {
      sink.warning(
        locate(compiled, node.id, 'claude_code_flags'),
        raw.cli_flags
          ? '`claude_code_flags` is ignored: `cli_flags` is set'
          : '`claude_code_flags` is deprecated',
        'rename it to `cli_flags`',
      );
    }
    if (node.type === 'agent' && raw.command && node.runtime !== 'command') {
      sink.warning(
        locate(compiled, node.id, 'command'),
        `\`command\` is ignored with runtime ${node.runtime} (\`${node.id}\`)`,
        'set `runtime: command` to run it',
      );
    }
    if (node.type === 'agent' && raw.openai && node.runtime !== 'openai') {
      sink.warning(
        locate(compiled, node.id, 'openai'),
        `\`openai\` is ignored with runtime ${node.runtime} (\`${node.id}\`)`,
        'set `runtime: openai` to use the endpoint',
      );
    }
    if (node.type === 'agent' && raw.resume && !RUNTIMES[node.runtime].resumes) {
      sink.warning(
        locate(compiled, node.id, 'resume'),
        `\`resume\` has no effect with runtime ${node.runtime}: it keeps no conversation`,
        `resume works with ${spellList(runtimesWith('resumes'), 'and')}`,
      );
    }
    if (node.type === 'agent' && node.gate?.runtime && node.gate.type !== 'llm') {
      sink.warning(
        locate(compiled, node.id, 'gate', 'runtime'),
        `\`runtime\` is ignored on a gate of type ${node.gate.type}`,
        'only llm gates run on a runtime',
      );
    }
    if (node.type === 'agent' && node.gate?.command && node.gate.type !== 'command') {
      sink.warning(
        locate(compiled, node.id, 'gate', 'command'),
        `\`command\` is ignored on a gate of type ${node.gate.type}`,
        'set `type: command`',
      );
    }
  }
}

function warnMissingClis(
  compiled: CompiledPipeline,
  sink: DiagnosticSink,
  pathEnv: string | undefined,
): void {
  const found = new Map<string, boolean>();
  for (const node of compiled.pipeline.agents) {
    if (node.type !== 'agent' || !isCliRuntime(node.runtime)) continue;
    const cli = RUNTIMES[node.runtime];
    if (!found.has(cli.bin)) found.set(cli.bin, isOnPath(cli.bin, pathEnv));
    if (found.get(cli.bin)) continue;
    sink.warning(
      locate(compiled, node.id, 'runtime'),
      `\`${cli.bin}\` is not on PATH (runtime of \`${node.id}\`)`,
      `install it (${cli.install}) or choose another runtime`,
    );
  }
}
