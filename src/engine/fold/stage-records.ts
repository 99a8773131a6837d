import { findNode } from '../../core/pipeline.js';
import { formatAgentNotesSection, formatStageSection } from '../../pipeline/lang/context.js';
import type { StageRecord, TaskState } from './types.js';

/** A task's stages: making a stage's record, finding it, writing it into context.md. */

/** A stage's record as it starts: running, nothing produced yet. */
export function newStageRecord(
  start: Pick<StageRecord, 'n' | 'agent' | 'activation' | 'input' | 'attempt' | 'startedAt' | 'turn'>,
): StageRecord {
  return {
    n: start.n,
    agent: start.agent,
    activation: start.activation,
    input: start.input,
    status: 'running',
    attempt: start.attempt,
    output: '',
    usage: { input_tokens: 0, output_tokens: 0 },
    durationMs: 0,
    startedAt: start.startedAt,
    finishedAt: null,
    gate: null,
    gateWaiting: false,
    error: null,
    handedOff: false,
    turn: start.turn,
    commit: null,
    warnings: [],
  };
}

export function stageOf(state: TaskState, n: number): StageRecord {
  const stage = state.stages[n - 1];
  if (!stage) throw new Error(`task ${state.id}: unknown stage ${n}`);
  return stage;
}

export function recordStageInContext(state: TaskState, stage: StageRecord, status: string) {
  const node = findNode(state.definition, stage.agent);
  const taskName = node?.type === 'session' ? 'session' : node?.handoffs[0]?.task || 'execute';
  const at = stage.finishedAt ?? stage.startedAt;
  const section = {
    n: stage.n,
    agent: stage.agent,
    taskName,
    status,
    input: stage.input,
    output: stage.output,
    at,
    ...(stage.gate?.decision === 'rejected' && stage.gate.reason ? { rejectReason: stage.gate.reason } : {}),
  };
  state.contextMd += formatStageSection(section);
  state.agentNotes[stage.agent] =
    (state.agentNotes[stage.agent] ?? '') + formatAgentNotesSection(stage.n, at, stage.output);
}
