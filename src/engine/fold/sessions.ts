import { findNode, type SessionNode } from '../../core/pipeline.js';
import { formatAgentNotesSection } from '../../pipeline/lang/context.js';
import { hasVote, parseNextSpeaker } from '../../pipeline/lang/directives.js';
import {
  formatConsensus,
  formatNoConsensus,
  formatRoundHeader,
  formatTranscriptHeader,
  formatTurn,
} from '../../pipeline/lang/transcript.js';
import { activationOf } from './activations.js';
import { newStageRecord } from './stage-records.js';
import type { Activation, Reducers, SessionProgress, StageRecord, TaskState } from './types.js';

/** How session events, and the stages that are a session's turns, change a task's state. */

export const sessionReducers = {
  session_started(state, event) {
    const activation = activationOf(state, event.activation);
    activation.session = {
      participants: event.participants,
      round: 1,
      spoken: [],
      next: null,
      phase: 'turns',
      outcome: null,
      votes: {},
      lastMessage: '',
      summary: null,
      pendingStage: null,
    };
    state.transcript =
      formatTranscriptHeader({ topic: event.topic, participants: event.participants, started: event.at }) +
      formatRoundHeader(1);
  },

  session_round_ended(state, event) {
    const activation = activationOf(state, event.activation);
    const session = activation.session!;
    const node = sessionNode(state, activation);
    if (event.consensus) {
      session.outcome = 'consensus';
      session.phase = node.summary_agent ? 'summary' : 'done';
      if (!node.summary_agent) {
        state.transcript += formatConsensus({
          round: event.round,
          agreedBy: event.agreed,
          summary: session.lastMessage,
        });
      }
    } else if (event.round >= node.max_rounds) {
      session.outcome = 'no_consensus';
      session.phase = 'done';
      state.transcript += formatNoConsensus({ rounds: event.round });
    } else {
      session.round = event.round + 1;
      session.spoken = [];
      session.next = null;
      state.transcript += formatRoundHeader(session.round);
    }
  },

  /** The session is over: its outcome becomes a stage of its own, which hands off like any other. */
  session_ended(state, event) {
    const activation = activationOf(state, event.activation);
    const session = activation.session!;
    session.outcome = event.outcome;
    session.phase = 'done';
    const stage = newStageRecord({
      n: event.stage,
      agent: event.session,
      activation: event.activation,
      input: activation.input,
      attempt: 1,
      startedAt: event.at,
      turn: null,
    });
    stage.status = 'completed';
    stage.output = event.output;
    stage.finishedAt = event.at;
    state.stages[event.stage - 1] = stage;
    activation.stage = event.stage;
    activation.status = 'settling';
  },
} satisfies Partial<Reducers>;

export function turnFinished(state: TaskState, activation: Activation, stage: StageRecord): void {
  const session = activation.session!;
  activation.status = 'ready';
  session.pendingStage = null;
  state.agentNotes[stage.agent] =
    (state.agentNotes[stage.agent] ?? '') +
    formatAgentNotesSection(stage.n, stage.finishedAt ?? stage.startedAt, stage.output);
  if (stage.turn?.summary) {
    session.summary = stage.output;
    session.phase = 'done';
    state.transcript += formatConsensus({
      round: session.round,
      agreedBy: agreedBy(session),
      summary: stage.output,
    });
    return;
  }
  const node = sessionNode(state, activation);
  state.transcript += formatTurn({
    agent: stage.agent,
    time: clock(stage.finishedAt ?? stage.startedAt),
    message: stage.output,
  });
  // the latest turn is what counts, so a participant can take a vote back
  session.votes[stage.agent] = hasVote(stage.output, node.consensus.keyword);
  session.lastMessage = stage.output;
  session.spoken.push(stage.agent);
  if (node.turn_order === 'moderator' && stage.agent === node.summary_agent) {
    session.next = parseNextSpeaker(stage.output, session.participants);
  }
}

/** aqm: a failed turn becomes a message in the transcript and the session goes on. */
export function turnFailed(state: TaskState, activation: Activation, stage: StageRecord): void {
  stage.output = `[ERROR: agent '${stage.agent}' failed: ${stage.error?.message ?? 'unknown error'}]`;
  turnFinished(state, activation, stage);
}

export function agreedBy(session: SessionProgress): string[] {
  return session.participants.filter((p) => session.votes[p]);
}

function sessionNode(state: TaskState, activation: Activation): SessionNode {
  const node = findNode(state.definition, activation.agent);
  if (node?.type !== 'session') throw new Error(`${activation.agent} is not a session`);
  return node;
}

function clock(iso: string): string {
  return iso.slice(11, 19);
}
