import type { SourcePosition } from '../core/pipeline.js';
import { AgentSchema, type RawAgent } from './schema.js';
import type { Path, YamlSource } from './yaml-source.js';

/** Where an agent mapping was written: its file and its path inside that file. */
export interface AgentOrigin {
  source: YamlSource;
  path: Path;
}

/** A raw agent together with where each of its fields was written. */
export interface LocatedAgent {
  raw: RawAgent;
  at: AgentOrigin;
  /** Fields taken from an ancestor through `extends`, and where that ancestor wrote them. */
  inherited: Partial<Record<keyof RawAgent, AgentOrigin>>;
  /** Pulled in only as the `extends` parent of an imported agent: merged, then dropped. */
  hidden?: boolean;
}

/** Where a field of the agent (or the agent itself, with no path) was written. */
export function positionOf(agent: LocatedAgent, ...path: Path): SourcePosition {
  const head = path[0];
  const origin = (typeof head === 'string' && agent.inherited[head as keyof RawAgent]) || agent.at;
  return origin.source.position([...origin.path, ...path]);
}

/**
 * The agents of a list, located. Their schema problems were already reported for the whole
 * document; the ids of agents that cannot be used go to `invalid` so that references to them are
 * not reported a second time as unknown.
 */
export function collectAgents(
  list: unknown,
  source: YamlSource,
  at: Path,
  invalid: Set<string>,
): LocatedAgent[] {
  if (!Array.isArray(list)) return [];
  const agents: LocatedAgent[] = [];
  list.forEach((item: unknown, i) => {
    const raw = parseAgent(item);
    if (raw) agents.push({ raw, at: { source, path: [...at, i] }, inherited: {} });
    else if (isMapping(item) && typeof item.id === 'string') invalid.add(item.id);
  });
  return agents;
}

/** Fields other checks depend on: without them the agent would cause errors of its own. */
const ESSENTIAL = new Set(['id', 'type', 'runtime', 'abstract', 'extends', 'gate', 'participants', 'chunks']);

/**
 * The agent, or, when only inessential fields are broken, the agent without them: its handoffs,
 * sessions and templates are still worth checking (the broken fields are reported already).
 */
function parseAgent(item: unknown): RawAgent | undefined {
  const parsed = AgentSchema.safeParse(item);
  if (parsed.success) return parsed.data;
  if (!isMapping(item)) return undefined;
  const broken = new Set(
    parsed.error.issues.flatMap((issue) =>
      issue.code === 'unrecognized_keys' && issue.path.length === 0 ? issue.keys : [String(issue.path[0])],
    ),
  );
  if ([...broken].some((field) => ESSENTIAL.has(field))) return undefined;
  const retried = AgentSchema.safeParse(
    Object.fromEntries(Object.entries(item).filter(([k]) => !broken.has(k))),
  );
  return retried.success ? retried.data : undefined;
}

export function isMapping(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
