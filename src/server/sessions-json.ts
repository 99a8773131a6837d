import type { StoredEvent } from '../core/events.js';
import type { Session } from './api/tasks.js';

/**
 * The task's sessions round by round, from its event log: each speaker's turn (a stage, whose
 * output is the message), who voted to agree in each round, and how the session ended.
 */
export function sessionsOf(events: Iterable<StoredEvent>): Session[] {
  const sessions: Session[] = [];
  // the activation's session still open (an activation may hold several sessions over a loop)
  const open = new Map<string, Session>();
  for (const event of events) {
    switch (event.type) {
      case 'session_started': {
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
        break;
      }
      case 'stage_started': {
        const session = event.turn ? open.get(event.activation) : undefined;
        if (!session || !event.turn) break;
        if (event.turn.summary) {
          session.summary = { stage: event.stage, agent: event.agent };
          break;
        }
        let round = session.rounds.find((r) => r.round === event.turn!.round);
        if (!round) {
          round = { round: event.turn.round, turns: [], agreed: null, consensus: null };
          session.rounds.push(round);
        }
        // a turn that runs again (retry, interruption) keeps its place
        const turn = round.turns.find((t) => t.stage === event.stage);
        if (!turn) round.turns.push({ stage: event.stage, agent: event.agent, agreed: null });
        break;
      }
      case 'session_round_ended': {
        const session = open.get(event.activation);
        const round = session?.rounds.find((r) => r.round === event.round);
        if (!round) break;
        round.agreed = event.agreed;
        round.consensus = event.consensus;
        for (const turn of round.turns) turn.agreed = event.agreed.includes(turn.agent);
        break;
      }
      case 'session_ended': {
        const session = open.get(event.activation);
        if (!session) break;
        session.outcome = event.outcome;
        session.stage = event.stage;
        session.output = event.output;
        open.delete(event.activation);
        break;
      }
    }
  }
  return sessions;
}
