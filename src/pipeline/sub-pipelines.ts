import { existsSync } from 'node:fs';
import path from 'node:path';
import { containedPath } from '../core/contained-path.js';
import type { SourcePosition, SubPipeline } from '../core/pipeline.js';
import { didYouMean, listed } from './closest.js';
import { findNamedPipeline, findProjectRoot, pipelineNames } from './discover.js';
import { agentsOfFile, type ImportContext, OUTSIDE_HINT } from './imports.js';
import { type LocatedAgent, positionOf } from './located-agent.js';

/**
 * `plan: { pipeline: … }` (docs/task-graphs.md): a project pipeline runs each piece. Its agents
 * are brought into the planner's pipeline as `imports:` brings agents (its own imports followed,
 * the importing pipeline's params substituted, its own params, workspace and budget unused), so
 * the task's definition holds them: validate, the dashboard and resume see them. Agent ids are
 * not namespaced — handoffs, gates and templates name them as written — so an id the importing
 * pipeline (or another sub-pipeline) also uses is refused, naming both places.
 */
export function withSubPipelines(
  agents: LocatedAgent[],
  context: ImportContext,
): { agents: LocatedAgent[]; subPipelines: Map<string, SubPipeline> } {
  const subPipelines = new Map<string, SubPipeline>();
  const byFile = new Map<string, SubPipeline | null>();
  const taken = new Map(agents.map((a) => [a.raw.id, a]));
  const brought: LocatedAgent[] = [];
  for (const planner of agents) {
    const plan = planner.raw.plan;
    if (!plan?.pipeline) continue;
    const at = positionOf(planner, 'plan', 'pipeline');
    if (plan.worker !== undefined) {
      context.sink.error(
        at,
        `the plan of \`${planner.raw.id}\` names both a worker and a pipeline`,
        'keep one: `worker:` (one agent builds each piece) or `pipeline:` (a sub-pipeline runs each piece)',
      );
      continue;
    }
    const writtenIn = (planner.inherited.plan ?? planner.at).source.file;
    const file = locateSubPipeline(plan.pipeline, writtenIn, at, context);
    if (!file) continue;
    if (!byFile.has(file)) {
      const agentsOf = readSubPipeline(plan.pipeline, file, at, writtenIn, taken, context);
      byFile.set(file, agentsOf && { name: plan.pipeline, file, agents: runnable(agentsOf) });
      if (agentsOf) {
        for (const a of agentsOf) taken.set(a.raw.id, a);
        brought.push(...agentsOf);
      }
    }
    const sub = byFile.get(file);
    if (sub) subPipelines.set(planner.raw.id, { ...sub, name: plan.pipeline });
  }
  return { agents: [...agents, ...brought], subPipelines };
}

/** The ids of the agents that run: not abstract, not only an imported agent's hidden ancestor. */
function runnable(agents: LocatedAgent[]): string[] {
  return agents.filter((a) => !a.raw.abstract && !a.hidden).map((a) => a.raw.id);
}

/** A file (it has a `/` or ends in .yaml) relative to the planner's file, else a pipeline's name. */
function locateSubPipeline(
  written: string,
  plannerFile: string,
  at: SourcePosition,
  context: ImportContext,
): string | null {
  const { sink, within } = context;
  const isFile = written.includes('/') || /\.ya?ml$/.test(written);
  let file: string;
  if (isFile) file = path.resolve(path.dirname(plannerFile), written);
  else {
    const root = within ?? findProjectRoot(path.dirname(plannerFile));
    const found = findNamedPipeline(root, written);
    if (!found) {
      const names = pipelineNames(root);
      sink.error(
        at,
        `no pipeline named "${written}" for the plan's pieces`,
        didYouMean(written, names) ??
          (names.length
            ? `the project's pipelines: ${listed(names)}`
            : 'name a pipeline in .troupe/pipelines/, or a file such as ./build.yaml'),
      );
      return null;
    }
    file = found.file;
  }
  if (within && containedPath(within, file).kind === 'outside') {
    sink.error(at, `cannot use pipeline "${written}": it is outside the project`, OUTSIDE_HINT);
    return null;
  }
  if (!existsSync(file)) {
    sink.error(
      at,
      `cannot use pipeline "${written}": no such file (${file})`,
      'paths are relative to this file',
    );
    return null;
  }
  return file;
}

/** Its agents, or null (reported) when it cannot run pieces: empty, planning again, or ids taken. */
function readSubPipeline(
  written: string,
  file: string,
  at: SourcePosition,
  plannerFile: string,
  taken: ReadonlyMap<string, LocatedAgent>,
  context: ImportContext,
): LocatedAgent[] | null {
  const { sink } = context;
  const agents = agentsOfFile(file, context, [plannerFile, file]);
  if (runnable(agents).length === 0) {
    sink.error(
      at,
      `pipeline "${written}" has no agent to run the pieces`,
      'its first agent starts each piece',
    );
    return null;
  }
  const planner = agents.find((a) => a.raw.plan);
  if (planner) {
    sink.error(
      at,
      `pipeline "${written}" has a planner, \`${planner.raw.id}\` (${where(positionOf(planner, 'plan'))}): a piece does not plan again`,
      'name a pipeline without `plan:`',
    );
    return null;
  }
  const clash = agents.find((a) => taken.has(a.raw.id));
  if (clash) {
    const other = taken.get(clash.raw.id)!;
    sink.error(
      at,
      `agent \`${clash.raw.id}\` of pipeline "${written}" (${where(positionOf(clash, 'id'))}) has the id of \`${other.raw.id}\` at ${where(positionOf(other, 'id'))}`,
      'a sub-pipeline shares its ids with the pipeline that uses it: rename one of them',
    );
    return null;
  }
  return agents;
}

function where(at: SourcePosition): string {
  return `${path.basename(at.file)}:${at.line}:${at.col}`;
}
