import { addUsage } from '../../core/usage.js';
import { activationOf } from './activations.js';
import { turnFailed, turnFinished } from './sessions.js';
import { newStageRecord, stageOf } from './stage-records.js';
import type { Reducers, TaskState } from './types.js';

/** How a stage runs: it starts, then completes, fails an attempt, waits out a limit or is cut off. */

export const stageReducers = {
  stage_started(state, event) {
    const activation = activationOf(state, event.activation);
    activation.status = 'running';
    activation.waitingFor = null;
    activation.retryAt = null;
    activation.mailbox = null;
    if (event.turn) activation.session!.pendingStage = event.stage;
    else {
      activation.stage = event.stage;
      activation.attempts = event.attempt;
    }
    state.stages[event.stage - 1] = newStageRecord({
      n: event.stage,
      agent: event.agent,
      activation: event.activation,
      input: event.input,
      attempt: event.attempt,
      startedAt: event.at,
      turn: event.turn ?? null,
    });
  },

  // the output so far, for whoever looks while the stage runs; stage_completed brings it whole
  stage_output(state, event) {
    const stage = state.stages[event.stage - 1];
    if (stage?.status === 'running') stage.output += event.text;
  },

  stage_completed(state, event) {
    const stage = stageOf(state, event.stage);
    stage.status = 'completed';
    stage.output = event.output;
    stage.usage = event.usage;
    stage.durationMs = event.durationMs;
    stage.finishedAt = event.at;
    stage.error = null;
    addUsage(state.usage, event.usage);
    if (event.meta) rememberMeta(state, event.agent, event.meta);
    const activation = activationOf(state, event.activation);
    activation.mailbox = null;
    if (stage.turn) turnFinished(state, activation, stage);
    else activation.status = 'settling';
  },

  stage_attempt_failed(state, event) {
    const stage = stageOf(state, event.stage);
    stage.status = 'failed';
    stage.error = event.error;
    stage.output = event.partialOutput;
    // older logs did not record it: the time between the stage's events is close enough
    stage.durationMs = event.durationMs ?? Math.max(0, Date.parse(event.at) - Date.parse(stage.startedAt));
    stage.finishedAt = event.at;
    if (event.meta) rememberMeta(state, event.agent, event.meta);
    const activation = activationOf(state, event.activation);
    activation.mailbox = null;
    if (stage.turn) turnFailed(state, activation, stage);
    else {
      activation.status = 'ready';
      activation.retryAt = event.retryAt ?? null;
    }
  },

  rate_limited(state, event) {
    const stage = stageOf(state, event.stage);
    stage.status = 'interrupted';
    stage.error = { kind: 'rate_limited', message: event.message };
    if (event.meta) rememberMeta(state, event.agent, event.meta);
    const activation = activationOf(state, event.activation);
    activation.status = 'ready';
    activation.retryAt = event.retryAt ?? event.resetAt;
    activation.waitingFor = { provider: event.provider, until: event.retryAt ?? event.resetAt };
    if (!stage.turn) activation.attempts = Math.max(0, activation.attempts - 1);
  },

  stage_warning(state, event) {
    stageOf(state, event.stage).warnings.push(event.message);
  },

  stage_interrupted(state, event) {
    const stage = stageOf(state, event.stage);
    stage.status = 'interrupted';
    const activation = activationOf(state, event.activation);
    activation.status = 'ready';
    activation.mailbox = null;
    // an interrupted attempt is not a failed one: it does not use up a retry
    if (!stage.turn) activation.attempts = Math.max(0, activation.attempts - 1);
  },
} satisfies Partial<Reducers>;

function rememberMeta(state: TaskState, agent: string, meta: Record<string, string | number | boolean>) {
  const list = state.agentMeta[agent] ?? [];
  list.push(meta);
  state.agentMeta[agent] = list;
}
