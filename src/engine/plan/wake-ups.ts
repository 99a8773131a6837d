import { isStopped } from '../../core/events.js';
import { type AgentNode, findNode, type RuntimeName } from '../../core/pipeline.js';
import { plannerNode, type TaskState } from '../fold/task-state.js';
import { nextSteps, type Step } from './plan.js';

/**
 * What a task needs to make progress, for the work queue (docs/distributed.md): which runtime
 * each planned step runs on and from when. Pure, as the planner is.
 */

/**
 * A wake-up the task needs: a worker serving `runtime` (null: any worker) with all of `labels`
 * (the agent's `worker_labels`), at `at` (null: now).
 */
export interface WakeUp {
  runtime: RuntimeName | null;
  labels: string[];
  at: string | null;
}

/** The runtime a step calls (the agent's own; a fallback or routed tier may differ at run time). */
export function stepRuntime(state: TaskState, step: Step): RuntimeName | null {
  switch (step.kind) {
    case 'start_stage':
    case 'verify_final': {
      const node = findNode(state.definition, step.agent);
      return node?.type === 'agent' ? node.runtime : null;
    }
    case 'evaluate_gate': {
      if (step.gate !== 'llm') return null;
      const node = findNode(state.definition, step.agent);
      if (node?.type !== 'agent') return null;
      const verifier = gateVerifier(state, step);
      if (verifier) return verifier.runtime;
      return node.gate?.runtime ?? state.gateConfig.runtime ?? node.runtime;
    }
    default:
      return null;
  }
}

/** The labels a worker needs to run a step: those of the agent whose runtime it calls. */
export function stepLabels(state: TaskState, step: Step): string[] {
  if (stepRuntime(state, step) === null || !('agent' in step) || !step.agent) return [];
  const verifier = step.kind === 'evaluate_gate' ? gateVerifier(state, step) : null;
  const node = verifier ?? findNode(state.definition, step.agent);
  return node?.type === 'agent' ? (node.worker_labels ?? []) : [];
}

/** The agent that judges an llm gate on its own runtime: the gate's verifier, or a piece's plan verifier. */
function gateVerifier(state: TaskState, step: Extract<Step, { kind: 'evaluate_gate' }>): AgentNode | null {
  const node = findNode(state.definition, step.agent);
  const id = step.piece
    ? plannerNode(state)?.plan?.verifier
    : node?.type === 'agent'
      ? node.gate?.verifier
      : null;
  const verifier = id ? findNode(state.definition, id) : undefined;
  return verifier?.type === 'agent' ? verifier : null;
}

/** When a step may start: a retry's backoff or a limit's reset (null: now). */
export function stepNotBefore(step: Step): string | null {
  return step.kind === 'start_stage' ? step.notBefore : null;
}

/**
 * One wake-up per runtime a task no process runs needs, each at its earliest step's time: the
 * planned steps', and at once the stages its last holder left running (they run again). None
 * when the task has ended or waits for a person.
 */
export function wakeUps(state: TaskState): WakeUp[] {
  if (isStopped(state.status)) return [];
  const byLane = new Map<string, WakeUp>();
  const need = (runtime: RuntimeName | null, labels: string[], at: string | null) => {
    const key = JSON.stringify([runtime, labels]);
    const known = byLane.get(key);
    if (known) known.at = earlier(known.at, at);
    else byLane.set(key, { runtime, labels, at });
  };
  for (const activation of state.activations.values()) {
    if (activation.status !== 'running') continue;
    const node = findNode(state.definition, activation.agent);
    if (node?.type === 'agent') need(node.runtime, node.worker_labels ?? [], null);
    else need(null, [], null);
  }
  for (const step of nextSteps(state))
    need(stepRuntime(state, step), stepLabels(state, step), stepNotBefore(step));
  return [...byLane.values()];
}

function earlier(a: string | null, b: string | null): string | null {
  if (a === null || b === null) return null;
  return Date.parse(a) <= Date.parse(b) ? a : b;
}
