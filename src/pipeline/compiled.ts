import type { Pipeline, SourcePosition } from '../core/pipeline.js';
import { type LocatedAgent, positionOf } from './located-agent.js';
import type { Path, YamlSource } from './yaml-source.js';

/** A loaded pipeline plus what the checks need to point at the YAML behind each node. */
export interface CompiledPipeline {
  pipeline: Pipeline;
  /** The main file. */
  source: YamlSource;
  /** The raw definition (after extends) of every node in `pipeline.agents`. */
  definitions: ReadonlyMap<string, LocatedAgent>;
  abstractIds: ReadonlySet<string>;
  /** Ids of agents already reported as broken: references to them are not errors of their own. */
  invalidIds: ReadonlySet<string>;
  /** The agents written (not abstract), usable or not: what a summary counts when there are errors. */
  writtenAgents: number;
}

/** Where a field of node `id` was written (inherited fields point into the parent). */
export function locate(compiled: CompiledPipeline, id: string, ...path: Path): SourcePosition {
  const agent = compiled.definitions.get(id);
  return agent ? positionOf(agent, ...path) : compiled.source.position([]);
}
