import type { SessionNode } from '../../core/pipeline.js';
import { agreedBy } from '../fold/sessions.js';
import type { Activation, SessionProgress, TaskState } from '../fold/task-state.js';
import { allChunksDone } from './chunks.js';
import type { Step } from './plan.js';

/**
 * What a session does next: open, the next speaker's turn, the end of a round (consensus or
 * not), the summary agent's closing turn, then the session's own stage. Pure, like plan.ts.
 */
export function planSession(
  state: TaskState,
  activation: Activation,
  node: SessionNode,
  nextStage: number,
): Step | null {
  const session = activation.session;
  if (!session) {
    return {
      kind: 'start_session',
      activation: activation.id,
      session: node.id,
      participants: node.participants,
      topic: activation.input,
    };
  }
  if (session.phase === 'turns') {
    const speaker = nextSpeaker(node, session);
    if (speaker !== undefined)
      return turn(activation, speaker, session.round, false, session.pendingStage ?? nextStage, state);
    const agreed = agreedBy(session);
    return {
      kind: 'end_round',
      activation: activation.id,
      round: session.round,
      agreed,
      consensus: consensus(node, session.votes, agreed) && chunksAllowConsensus(node, state),
    };
  }
  if (session.phase === 'summary') {
    return turn(
      activation,
      node.summary_agent!,
      session.round,
      true,
      session.pendingStage ?? nextStage,
      state,
    );
  }
  return {
    kind: 'end_session',
    activation: activation.id,
    session: node.id,
    stage: nextStage,
    outcome: session.outcome ?? 'no_consensus',
    rounds: session.round,
    output: session.summary ?? session.lastMessage,
  };
}

/**
 * Everyone speaks once a round. round_robin: in the order listed. moderator: the summary agent
 * opens, and then whoever its latest `NEXT: <id>` names, else the next in the list.
 */
function nextSpeaker(node: SessionNode, session: SessionProgress): string | undefined {
  const waiting = node.participants.filter((p) => !session.spoken.includes(p));
  if (node.turn_order !== 'moderator' || !node.summary_agent) return waiting[0];
  if (session.spoken.length === 0 && waiting.includes(node.summary_agent)) return node.summary_agent;
  if (session.next && waiting.includes(session.next)) return session.next;
  return waiting[0];
}

function chunksAllowConsensus(node: SessionNode, state: TaskState): boolean {
  return !node.consensus.require_chunks_done || allChunksDone(state.chunks);
}

function consensus(node: SessionNode, votes: Record<string, boolean>, agreed: string[]): boolean {
  if (node.consensus.method === 'moderator_decides')
    return node.summary_agent !== null && votes[node.summary_agent] === true;
  if (node.consensus.require === 'majority') return agreed.length > node.participants.length / 2;
  return agreed.length === node.participants.length;
}

function turn(
  activation: Activation,
  agent: string,
  round: number,
  summary: boolean,
  stage: number,
  state: TaskState,
): Step | null {
  if (stage > state.maxStages && stage > state.stages.length) {
    return {
      kind: 'fail',
      reason: `Exceeded maximum number of stages (${state.maxStages}).`,
      stage: null,
      errorKind: 'max_stages',
    };
  }
  return {
    kind: 'start_stage',
    activation: activation.id,
    agent,
    stage,
    attempt: 1,
    input: activation.input,
    notBefore: activation.retryAt,
    turn: { round, summary },
  };
}
