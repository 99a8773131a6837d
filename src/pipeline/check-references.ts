import type { Handoff, PipelineNode, PlanSettings, SessionNode, SourcePosition } from '../core/pipeline.js';
import {
  CONDITION_KEYWORDS,
  conditionApplies,
  conditionsFor,
  isConditionKeyword,
} from '../core/pipeline-vocabulary.js';
import { closest, didYouMean, listed } from './closest.js';
import { type CompiledPipeline, locate } from './compiled.js';
import type { DiagnosticSink } from './diagnostics.js';
import { parseCondition } from './lang/conditions.js';

const CONDITION_HINT = `a condition is one of ${CONDITION_KEYWORDS.join(', ')}, or an expression such as \`severity == critical\` or \`status in [done, skipped]\``;

/**
 * The errors aqm's loader raised (and more): every id a node names must be a node that runs, and
 * every condition must be able to fire.
 */
export function checkReferences(compiled: CompiledPipeline, sink: DiagnosticSink): void {
  const nodes = new Map(compiled.pipeline.agents.map((n) => [n.id, n]));

  /** Reports `id` unless it names a node; true when it does. */
  const mustExist = (id: string, at: SourcePosition, role: string): boolean => {
    if (nodes.has(id)) return true;
    if (compiled.invalidIds.has(id)) return false;
    if (compiled.abstractIds.has(id)) {
      sink.error(
        at,
        `${role} \`${id}\` is abstract`,
        'an abstract agent is only a base for `extends`; name an agent that extends it',
      );
    } else {
      sink.error(
        at,
        `${role} \`${id}\` does not exist`,
        didYouMean(id, nodes.keys()) ?? `agents: ${listed(nodes.keys())}`,
      );
    }
    return false;
  };

  for (const node of compiled.pipeline.agents) {
    node.handoffs.forEach((handoff, i) => {
      const at = (field: string) => locate(compiled, node.id, 'handoffs', i, field);
      for (const target of handoff.to) {
        if (target === '') {
          sink.error(at('to'), 'empty handoff target', 'separate agent ids with commas: "qa, docs"');
        } else if (target === '*') {
          if (handoff.condition !== 'auto') {
            sink.error(
              at('to'),
              '`*` is only allowed with `condition: auto`',
              'add `condition: auto`: the agent then picks with a `HANDOFF: <id>` line',
            );
          }
        } else {
          mustExist(target, at('to'), 'handoff target');
        }
      }
      checkCondition(node, handoff, at('condition'), sink);
    });
    if (node.type === 'session') checkSession(compiled, node, nodes, mustExist, sink);
    if (node.on_conflict) {
      const at = locate(compiled, node.id, 'on_conflict');
      if (
        mustExist(node.on_conflict, at, 'on_conflict agent') &&
        nodes.get(node.on_conflict)?.type !== 'agent'
      ) {
        sink.error(
          at,
          `on_conflict \`${node.on_conflict}\` is a session`,
          'name an agent: it works in a worktree',
        );
      }
    }
    if (node.type === 'agent' && node.plan) checkPlan(compiled, node, node.plan, nodes, mustExist, sink);
    const verifier = node.type === 'agent' ? node.gate?.verifier : null;
    if (verifier) {
      const at = locate(compiled, node.id, 'gate', 'verifier');
      if (verifier === node.id) {
        sink.error(at, `\`${node.id}\` cannot verify its own work`, 'name another agent: worker != tester');
      } else if (mustExist(verifier, at, 'verifier') && nodes.get(verifier)?.type !== 'agent') {
        sink.error(at, `verifier \`${verifier}\` is a session`, 'a verifier is an agent');
      }
    }
  }
}

function checkCondition(
  node: PipelineNode,
  handoff: Handoff,
  at: SourcePosition,
  sink: DiagnosticSink,
): void {
  const { condition } = handoff;
  if (isConditionKeyword(condition)) {
    if (!conditionApplies(condition, node.type)) {
      if (node.type === 'session') {
        sink.error(
          at,
          `\`${condition}\` never fires: sessions have no gate`,
          `use one of ${conditionsFor('session').join(', ')}`,
        );
      } else {
        sink.error(at, `\`${condition}\` only applies to sessions`, 'use `always` or a gate condition');
      }
    } else if (
      node.type === 'agent' &&
      !node.gate &&
      (condition === 'on_approve' || condition === 'on_reject')
    ) {
      sink.error(
        at,
        `\`${condition}\` never fires: \`${node.id}\` has no gate`,
        `add a \`gate:\` to \`${node.id}\`, or use \`always\``,
      );
    }
    return;
  }
  const keyword = /^\w+$/.test(condition) ? closest(condition, CONDITION_KEYWORDS) : undefined;
  if (keyword) {
    sink.error(at, `unknown condition \`${condition}\``, `did you mean \`${keyword}\`?`);
    return;
  }
  const parsed = parseCondition(condition);
  if (!parsed.ok) {
    sink.error(at, `invalid condition \`${condition}\`: ${parsed.message}`, CONDITION_HINT);
  } else if (/^on_\w+$/.test(condition)) {
    // it parses as a field of the output, which is almost never what an `on_…` word means
    sink.warning(
      at,
      `unknown condition \`${condition}\`: read as the output's field \`${condition}\`, it fires only when that field is set`,
      `a condition here is one of ${conditionsFor(node.type).join(', ')}, or an expression such as \`severity == critical\``,
    );
  }
}

function checkSession(
  compiled: CompiledPipeline,
  session: SessionNode,
  nodes: ReadonlyMap<string, PipelineNode>,
  mustExist: (id: string, at: SourcePosition, role: string) => boolean,
  sink: DiagnosticSink,
): void {
  const at = (...path: (string | number)[]) => locate(compiled, session.id, ...path);
  if (session.participants.length === 0) {
    sink.error(
      at('participants'),
      `session \`${session.id}\` has no participants`,
      'participants: [architect, security]',
    );
  }
  session.participants.forEach((id, j) => {
    if (mustExist(id, at('participants', j), 'participant') && nodes.get(id)?.type === 'session') {
      sink.error(
        at('participants', j),
        `participant \`${id}\` is a session`,
        'sessions cannot take part in sessions',
      );
    }
  });
  const summary = session.summary_agent;
  if (
    summary &&
    mustExist(summary, at('summary_agent'), 'summary agent') &&
    !session.participants.includes(summary)
  ) {
    sink.error(
      at('summary_agent'),
      `summary agent \`${summary}\` is not a participant of \`${session.id}\``,
      `add \`${summary}\` to participants`,
    );
  }
  if (session.consensus.require_chunks_done && !session.chunks) {
    sink.error(
      at('consensus', 'require_chunks_done'),
      '`require_chunks_done` needs a `chunks:` block on the session',
      'add `chunks: { initial: [...] }`, or drop require_chunks_done',
    );
  }
}

/**
 * A planner's worker and verifier are agents, the worker is not the planner (a piece would plan
 * again), and the verifier is neither (worker != tester).
 */
function checkPlan(
  compiled: CompiledPipeline,
  node: PipelineNode,
  plan: PlanSettings,
  nodes: Map<string, PipelineNode>,
  mustExist: (id: string, at: SourcePosition, what: string) => boolean,
  sink: DiagnosticSink,
): void {
  const at = (field: string) => locate(compiled, node.id, 'plan', field);
  if (plan.worker === '') {
    // a `pipeline:` that could not be used was reported where it is written
    if (compiled.definitions.get(node.id)?.raw.plan?.pipeline === undefined) {
      sink.error(
        locate(compiled, node.id, 'plan'),
        `the plan of \`${node.id}\` names no worker`,
        'add `worker: <agent>` (one agent builds each piece) or `pipeline: <name or ./file.yaml>`',
      );
    }
  } else if (plan.worker === node.id) {
    sink.error(
      at('worker'),
      `\`${node.id}\` cannot be its own plan's worker`,
      'name the agent that builds each piece',
    );
  } else if (
    mustExist(plan.worker, at('worker'), 'plan worker') &&
    nodes.get(plan.worker)?.type !== 'agent'
  ) {
    sink.error(
      at('worker'),
      `plan worker \`${plan.worker}\` is a session`,
      'a worker is an agent: it works in a worktree',
    );
  }
  for (const id of plan.pipeline?.agents ?? []) {
    nodes.get(id)?.handoffs.forEach((handoff, i) => {
      if (handoff.to.length < 2 || handoff.condition === 'auto') return;
      sink.warning(
        locate(compiled, id, 'handoffs', i, 'to'),
        `\`${id}\` hands off to several agents at once: inside a piece of \`${node.id}\`'s plan they are not a fan-out`,
        "a piece's chain runs one stage after another: hand off to one agent at a time",
      );
    });
  }
  const verifier = plan.verifier;
  if (!verifier) return;
  if (plan.pipeline?.agents.includes(verifier)) {
    sink.error(
      at('verifier'),
      `\`${verifier}\` cannot verify pieces: it is an agent of pipeline "${plan.pipeline.name}", which builds them`,
      'name an agent outside that pipeline: worker != tester',
    );
  } else if (verifier === plan.worker || verifier === node.id) {
    sink.error(
      at('verifier'),
      `\`${verifier}\` cannot verify pieces it ${verifier === node.id ? 'planned' : 'built'}`,
      'name another agent: worker != tester',
    );
  } else if (mustExist(verifier, at('verifier'), 'plan verifier') && nodes.get(verifier)?.type !== 'agent') {
    sink.error(at('verifier'), `plan verifier \`${verifier}\` is a session`, 'a verifier is an agent');
  }
}
