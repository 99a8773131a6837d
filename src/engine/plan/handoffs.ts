import type { HandoffTarget } from '../../core/events.js';
import type { Handoff, Pipeline, PipelineNode } from '../../core/pipeline.js';
import { evaluateCondition } from '../../pipeline/lang/conditions.js';
import { parseHandoffDirective } from '../../pipeline/lang/directives.js';
import { renderTemplate } from '../../pipeline/lang/template.js';
import type { Branch, StageRecord } from '../fold/task-state.js';
import { branchesVariable } from './branches-variable.js';

/**
 * Which agents a settled stage hands on to, and with what input. aqm's rules, with its README's
 * promise kept where its code broke it: a gate rejection fires only `on_reject` handoffs, and
 * with none the agent itself runs again with the reason (docs/aqm-compatibility.md).
 */
export function resolveHandoffs(
  pipeline: Pipeline,
  node: PipelineNode,
  stage: StageRecord,
  branches: Branch[],
  sessionOutcome: 'consensus' | 'no_consensus' | null,
): HandoffTarget[] {
  const gate = stage.gate;
  const vars = {
    output: stage.output,
    input: stage.input,
    reject_reason: gate?.decision === 'rejected' ? gate.reason : '',
    gate_result: gate?.decision ?? '',
    branches: branchesVariable(branches),
    params: pipeline.params,
  };
  const targets: HandoffTarget[] = [];
  const add = (agent: string, input: string, condition: string) => {
    if (!targets.some((t) => t.agent === agent)) targets.push({ agent, input, condition });
  };
  // output that failed its spec, output_schema or plan check goes back to its own agent, whatever on_reject says
  const checkFailed = gate?.by === 'spec' || gate?.by === 'output_schema' || gate?.by === 'plan';
  for (const handoff of checkFailed ? [] : node.handoffs) {
    const holds =
      sessionOutcome === 'no_consensus'
        ? handoff.condition === 'on_no_consensus'
        : conditionHolds(handoff.condition, gate?.decision ?? null, stage.output);
    if (!holds) continue;
    const ids = handoff.condition === 'auto' ? autoTargets(pipeline, handoff, stage.output) : handoff.to;
    if (ids.length === 0) continue;
    const input = renderTemplate(
      handoff.payload,
      vars,
      `${node.id}: handoff to ${handoff.to.join(', ')}: payload`,
    );
    for (const id of ids) add(id, input, handoff.condition);
  }
  if (
    gate?.decision === 'rejected' &&
    (checkFailed || !node.handoffs.some((h) => h.condition === 'on_reject'))
  ) {
    add(
      node.id,
      `${stage.input}\n\n--- Gate Rejection ---\n${gate.reason}\n\n--- Previous Output ---\n${stage.output}`,
      'gate_retry',
    );
  }
  return targets;
}

export function conditionHolds(
  condition: string,
  decision: 'approved' | 'rejected' | null,
  output: string,
): boolean {
  switch (condition) {
    case 'on_approve':
      return decision === 'approved';
    case 'on_reject':
      return decision === 'rejected';
    case 'on_no_consensus':
      return false;
    case 'always':
    case 'auto':
    case 'on_pass':
      return decision !== 'rejected';
    default:
      return decision !== 'rejected' && evaluateCondition(condition, output);
  }
}

function autoTargets(pipeline: Pipeline, handoff: Handoff, output: string): string[] {
  return parseHandoffDirective(output, allowedTargets(pipeline, handoff));
}

function allowedTargets(pipeline: Pipeline, handoff: Handoff): string[] {
  return handoff.to.includes('*') ? pipeline.agents.map((a) => a.id) : handoff.to;
}

/** Whom a `HANDOFF:` of this agent can name: the targets of its `condition: auto` handoffs, each once. */
export function directiveTargets(pipeline: Pipeline, node: PipelineNode): string[] {
  const auto = node.handoffs.filter((h) => h.condition === 'auto');
  return [...new Set(auto.flatMap((h) => allowedTargets(pipeline, h)))];
}
