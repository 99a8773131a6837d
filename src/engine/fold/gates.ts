import { formatHumanSection } from '../../pipeline/lang/context.js';
import { activationOf, addActivation } from './activations.js';
import { recordStageInContext, stageOf } from './stage-records.js';
import type { Reducers } from './types.js';

/**
 * Where the task waits on a judgement: a stage's gate, troupe's own output checks, a verifier's
 * verdict, and questions to a person (`human_input:`, a merge conflict) with their answers.
 */

export const gateReducers = {
  gate_waiting(state, event) {
    stageOf(state, event.stage).gateWaiting = true;
  },

  gate_decided(state, event) {
    const stage = stageOf(state, event.stage);
    stage.gate = {
      decision: event.decision,
      reason: event.reason,
      by: event.by,
      ...(event.from ? { from: event.from } : {}),
    };
    stage.gateWaiting = false;
    if (event.by === 'human') {
      state.humanAnswers[event.agent] = (state.humanAnswers[event.agent] ?? 0) + 1;
    } else {
      state.gateCalls[event.agent] = (state.gateCalls[event.agent] ?? 0) + 1;
      if (event.decision === 'rejected') {
        state.gateRejections[event.agent] = (state.gateRejections[event.agent] ?? 0) + 1;
      }
    }
  },

  // a gate rejection by troupe itself: it counts toward max_retries, not the script's gate place
  output_rejected(state, event) {
    const stage = stageOf(state, event.stage);
    stage.gate = { decision: 'rejected', reason: event.reason, by: event.check };
    state.gateRejections[event.agent] = (state.gateRejections[event.agent] ?? 0) + 1;
  },

  verified(state, event) {
    if (event.sha) state.verified[event.sha] = event.decision;
  },

  human_input_requested(state, event) {
    const activation = activationOf(state, event.activation);
    activation.status = 'awaiting_human';
    activation.pendingQuestion = { mode: event.mode, questions: event.questions, stage: event.stage };
    if (event.stage !== null)
      recordStageInContext(state, stageOf(state, event.stage), 'awaiting_human_input');
  },

  human_input_given(state, event) {
    const activation = activationOf(state, event.activation);
    const question = activation.pendingQuestion;
    activation.pendingQuestion = null;
    state.humanAnswers[activation.agent] = (state.humanAnswers[activation.agent] ?? 0) + 1;
    const exchange = formatHumanSection({
      agent: activation.agent,
      questions: question?.questions ?? [],
      answer: event.answer,
      at: event.at,
    });
    state.contextMd += exchange;
    state.agentNotes[activation.agent] = (state.agentNotes[activation.agent] ?? '') + exchange;
    if (question?.mode === 'merge_conflict') {
      // the person resolved it in the worktree: the join commits what they left and merges the rest
      if (activation.conflict) activation.conflict.handled = true;
      activation.status = 'ready';
      return;
    }
    if (!question || question.mode === 'before') {
      activation.humanAnswer = event.answer;
      activation.status = 'ready';
      return;
    }
    // on_demand: the same agent carries on with its questions, the answer and what it wrote
    activation.status = 'done';
    const stage = question.stage === null ? undefined : state.stages[question.stage - 1];
    const input = [
      stage?.input ?? activation.input,
      '',
      "--- Agent's Questions ---",
      ...question.questions.map((q) => `- ${q}`),
      '',
      '--- User Response ---',
      event.answer,
      '',
      '--- Previous Agent Output ---',
      stage?.output ?? '',
      '',
      "Continue based on the user's response.",
    ].join('\n');
    const next = addActivation(state, {
      agent: activation.agent,
      input,
      group: activation.group,
      lineage: activation.lineage,
      origin: activation.origin,
    });
    next.continuation = true;
  },
} satisfies Partial<Reducers>;
