import { eventTable, handleEvent } from '../core/event-table.js';
import type { StoredEvent } from '../core/events.js';
import type { Session } from './api/tasks.js';

/**
 * The task's sessions round by round, from its event log: each speaker's turn (a stage, whose
 * output is the message), who voted to agree in each round, and how the session ended.
 */
export function sessionsOf(events: Iterable<StoredEvent>): Session[] {
  const read: SessionsRead = { sessions: [], open: new Map() };
  for (const event of events) handleEvent(SESSION_EVENTS, event, read);
  return read.sessions;
}

interface SessionsRead {
  sessions: Session[];
  /** The activation's session still open (an activation may hold several sessions over a loop). */
  open: Map<string, Session>;
}

const SESSION_EVENTS = eventTable<void, SessionsRead>()(
  {
    session_started: (event, { sessions, open }) => {
      const session: Session = {
        activation: event.activation,
        session: event.session,
        participants: event.participants,
        topic: event.topic,
        rounds: [],
        summary: null,
        outcome: null,
        stage: null,
        output: null,
      };
      sessions.push(session);
      open.set(event.activation, session);
    },
    stage_started: (event, { open }) => {
      const turn = event.turn;
      const session = turn ? open.get(event.activation) : undefined;
      if (!session || !turn) return;
      if (turn.summary) {
        session.summary = { stage: event.stage, agent: event.agent };
        return;
      }
      let round = session.rounds.find((r) => r.round === turn.round);
      if (!round) {
        round = { round: turn.round, turns: [], agreed: null, consensus: null };
        session.rounds.push(round);
      }
      // a turn that runs again (retry, interruption) keeps its place
      if (!round.turns.some((t) => t.stage === event.stage)) {
        round.turns.push({ stage: event.stage, agent: event.agent, agreed: null });
      }
    },
    session_round_ended: (event, { open }) => {
      const round = open.get(event.activation)?.rounds.find((r) => r.round === event.round);
      if (!round) return;
      round.agreed = event.agreed;
      round.consensus = event.consensus;
      for (const turn of round.turns) turn.agreed = event.agreed.includes(turn.agent);
    },
    session_ended: (event, { open }) => {
      const session = open.get(event.activation);
      if (!session) return;
      session.outcome = event.outcome;
      session.stage = event.stage;
      session.output = event.output;
      open.delete(event.activation);
    },
  },
  // a turn is named by its stage: what was said is in the task's stages, not here
  [
    'task_created',
    'task_resumed',
    'entry_routed',
    'task_restarted',
    'stage_output',
    'stage_completed',
    'stage_attempt_failed',
    'stage_interrupted',
    'stage_warning',
    'rate_limited',
    'gate_waiting',
    'mailbox_asked',
    'mailbox_replied',
    'mail_failed',
    'gate_decided',
    'human_input_requested',
    'human_input_given',
    'handoff',
    'join',
    'chunk_added',
    'chunk_updated',
    'chunk_removed',
    'isolation_chosen',
    'workspace_ready',
    'workspace_committed',
    'workspace_removed',
    'branch_workspace_ready',
    'branches_merged',
    'branch_conflict',
    'conflict_handled',
    'workspace_merged',
    'workspace_conflict',
    'workspace_merge_failed',
    'decision',
    'verified',
    'plan_expanded',
    'piece_started',
    'piece_failed',
    'piece_outside_paths',
    'plan_replanned',
    'task_sized',
    'spec_recorded',
    'output_rejected',
    'budget_warning',
    'task_completed',
    'task_failed',
    'task_cancelled',
    'task_parked',
  ],
);
