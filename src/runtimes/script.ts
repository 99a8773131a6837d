import { readFileSync } from 'node:fs';
import { messageOf, NotFoundError, ScriptError } from '../core/errors.js';
import type { Pipeline } from '../core/pipeline.js';
import { ROUTER_IDS, type Script, ScriptSchema } from '../core/script.js';
import { didYouMean, listed } from '../pipeline/closest.js';
import { DiagnosticSink, displayPath } from '../pipeline/diagnostics.js';
import { nodesById, reachableFrom } from '../pipeline/lang/graph.js';
import { YamlSource } from '../pipeline/yaml-source.js';

/**
 * The scripted runtime's script (`troupe run|test --script script.yaml`). A product feature:
 * people unit-test their pipelines offline against it. The contract is documented in
 * docs/scripted-runtime.md; keep both in step.
 */

/** The pipeline a script is for: its keys are checked against it before anything runs. */
export interface ScriptTarget {
  pipeline: Pipeline;
  /** `--agent`: where the run starts (default: the entry agent). */
  start?: string;
  /** Told what the script lacks that a run may need: "file:line:col: warning: …" and a hint. */
  warn: (line: string, hint?: string) => void;
}

export function loadScript(file: string, target?: ScriptTarget): Script {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new NotFoundError(`script not found: ${file}`);
  }
  return parseScript(text, file, target);
}

export function parseScript(text: string, file: string, target?: ScriptTarget): Script {
  const sink = new DiagnosticSink();
  const source = YamlSource.parse(file, text, sink);
  if (!source) throw firstError(sink);
  const parsed = ScriptSchema.safeParse(source.value() ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
    throw scriptError(source.position(path), `${issue.path.join('.') || 'script'}: ${issue.message}`);
  }
  for (const [agent, entries] of Object.entries(parsed.data.agents)) {
    entries.forEach((entry, i) => {
      if (typeof entry !== 'object' || entry.when === undefined) return;
      try {
        new RegExp(entry.when);
      } catch (e) {
        throw scriptError(
          source.position(['agents', agent, i, 'when']),
          `agents.${agent}: invalid when regex: ${messageOf(e)}`,
        );
      }
    });
  }
  if (target) checkAgainst(parsed.data, source, target);
  return parsed.data;
}

/**
 * A key naming no agent of the pipeline is an error (a typo would otherwise fail the run at
 * that agent's first stage, after the paid or slow ones before it). An agent or llm gate the
 * run can reach with no entry is only a warning: conditions may keep the run away from it.
 */
function checkAgainst(script: Script, source: YamlSource, { pipeline, start, warn }: ScriptTarget): void {
  const nodes = nodesById(pipeline);
  for (const section of ['agents', 'gates', 'human'] as const) {
    for (const id of Object.keys(script[section])) {
      if (nodes.has(id) || (section === 'agents' && ROUTER_IDS.includes(id))) continue;
      throw scriptError(
        source.keyPosition([section], id),
        `${section}.${id}: pipeline \`${pipeline.name}\` has no agent \`${id}\``,
        didYouMean(id, nodes.keys()) ?? `its agents: ${listed(nodes.keys())}`,
      );
    }
  }
  const from = start ?? pipeline.agents[0]?.id;
  const reached =
    pipeline.entry_point === 'auto' || from === undefined
      ? new Set(nodes.keys())
      : reachableFrom(pipeline, from);
  const agents = pipeline.agents.flatMap((n) => (n.type === 'agent' && reached.has(n.id) ? [n] : []));
  const at = (section: string) => {
    const { line, col } = source.keyPosition([], section);
    return `${displayPath(source.file)}:${line}:${col}`;
  };
  // a verifier judges through the gate of the agent it verifies (`gates.<that agent>`): no stage of its own
  const verifiers = new Set(
    agents.flatMap((a) => [a.gate?.verifier, a.plan?.verifier].filter((v) => v != null)),
  );
  const noReply = agents
    .filter((a) => !verifiers.has(a.id) && !script.agents[a.id]?.length)
    .map((a) => `\`${a.id}\``);
  if (noReply.length > 0) {
    warn(
      `${at('agents')}: warning: no reply for ${listed(noReply)}: a stage of theirs fails (script_missing)`,
      'add `agents: {<id>: ["reply"]}` for each, unless the run cannot get there',
    );
  }
  const noDecision = agents
    .filter((a) => a.gate?.type === 'llm' && !a.gate.verifier && !script.gates[a.id]?.length)
    .map((a) => `\`${a.id}\``);
  if (noDecision.length > 0) {
    warn(
      `${at('gates')}: warning: no gate decision for ${listed(noDecision)}: their llm gate fails (script_missing)`,
      'add `gates: {<id>: [approved]}` for each',
    );
  }
}

function scriptError(at: { file: string; line: number; col: number }, message: string, hint?: string) {
  return new ScriptError(
    `${displayPath(at.file)}:${at.line}:${at.col}: ${message}`,
    hint ? { hint } : undefined,
  );
}

function firstError(sink: DiagnosticSink): ScriptError {
  const [first] = sink.errors();
  return scriptError(first!, first!.message, first!.hint);
}
