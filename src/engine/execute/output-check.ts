import { messageOf } from '../../core/errors.js';
import type { TaskEvent } from '../../core/events.js';
import type { AgentNode } from '../../core/pipeline.js';
import type { Spec } from '../../core/spec.js';
import { lastJsonObject } from '../../pipeline/lang/conditions.js';
import { parseSizeDirective } from '../../pipeline/lang/directives.js';
import { schemaErrors } from '../../pipeline/lang/json-schema-check.js';
import { readPlan } from '../../pipeline/lang/plan.js';
import { needsSpec, SPEC_JSON_SCHEMA } from '../../pipeline/lang/spec.js';
import { pieceStatus, type TaskState } from '../fold/task-state.js';

/**
 * What a finished stage's output says beyond its text: a `SIZE:` line (`task_sized`), and for
 * agents with `spec: required` or `output_schema:` whether its JSON object passes
 * (`spec_recorded`) or sends the stage back (`output_rejected`, a gate rejection). The JSON object
 * is the one conditions read: the last in the output. Committed with the stage's completion, so
 * the planner never sees a stage whose check is still to come.
 */
export function outputCheckEvents(
  state: TaskState,
  node: AgentNode,
  stage: number,
  output: string,
  turn: boolean,
): TaskEvent[] {
  const events: TaskEvent[] = [];
  let size = state.size?.size ?? null;
  const said = parseSizeDirective(output);
  if (said && said !== size) {
    events.push({ type: 'task_sized', size: said, by: node.id });
    size = said;
  }
  const schema = node.output_schema ?? null;
  const wantsSpec = node.spec === 'required';
  if (turn) return events;
  if (node.plan) {
    const read = readPlan(output, mergedPieces(state));
    if ('errors' in read)
      return [
        ...events,
        {
          type: 'output_rejected',
          stage,
          agent: node.id,
          check: 'plan',
          reason: `the plan does not validate:\n${bullets(read.errors)}\n${PLAN_HINT}`,
        },
      ];
  }
  if (!schema && !wantsSpec) return events;
  const json = lastJsonObject(output);
  const reject = (check: 'spec' | 'output_schema', reason: string): TaskEvent[] => [
    ...events,
    { type: 'output_rejected', stage, agent: node.id, check, reason },
  ];
  if (schema) {
    const errors = json ? checked(schema, json) : ['no JSON object found in the output'];
    if (errors.length > 0)
      return reject('output_schema', `the output does not match its output_schema:\n${bullets(errors)}`);
  }
  if (wantsSpec) {
    const errors = json ? checked(SPEC_JSON_SCHEMA, json) : null;
    if (errors?.length === 0) {
      events.push({ type: 'spec_recorded', stage, agent: node.id, spec: json as Spec });
    } else if (needsSpec(size)) {
      const what = errors
        ? `the spec is invalid:\n${bullets(errors)}`
        : 'no spec (JSON object) found in the output';
      return reject('spec', `${what}\n${SPEC_HINT.replace('SIZE', size!)}`);
    }
  }
  return events;
}

const PLAN_HINT =
  'Write the plan as one JSON object (schema/plan.schema.json): {"pieces": [{"id": "api", "goal": "…", "paths": ["src/api/"], "depends_on": [], "size": "S", "checks": ["npm test"]}]}.';

/** Pieces an earlier plan of the task merged: a re-plan may depend on them. */
function mergedPieces(state: TaskState): Set<string> {
  const pieces = [...(state.plan?.pieces.values() ?? [])];
  return new Set(pieces.filter((p) => pieceStatus(state, p) === 'merged').map((p) => p.id));
}

const SPEC_HINT =
  'A task of size SIZE needs a spec first: a JSON object {"requirements": ["…"], "files": ["path"], "verification": ["command or check"]} with at least one requirement.';

function checked(schema: Record<string, unknown>, value: unknown): string[] {
  try {
    return schemaErrors(schema, value);
  } catch (error) {
    return [`the schema cannot be used: ${messageOf(error)}`];
  }
}

function bullets(lines: string[]): string {
  return lines.map((l) => `- ${l}`).join('\n');
}
