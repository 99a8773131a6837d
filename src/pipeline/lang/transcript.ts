/**
 * transcript.md, a session's minutes, in aqm's format: a header, `## Round N` per round, one
 * `### [agent] (HH:MM:SS)` entry per turn, and how it ended. The pieces concatenate as written.
 */

export interface TranscriptHeader {
  topic: string;
  participants: string[];
  /** ISO 8601, seconds, UTC. */
  started: string;
}

export interface TranscriptTurn {
  agent: string;
  /** HH:MM:SS, UTC. */
  time: string;
  message: string;
}

export interface ConsensusRecord {
  round: number;
  agreedBy: string[];
  summary: string;
}

export function formatTranscriptHeader(h: TranscriptHeader): string {
  return (
    `# Meeting Transcript\n**Topic**: ${h.topic}\n**Participants**: ${h.participants.join(', ')}\n` +
    `**Started**: ${h.started}\n\n---\n\n`
  );
}

export function formatRoundHeader(n: number): string {
  return `## Round ${n}\n\n`;
}

export function formatTurn(t: TranscriptTurn): string {
  return `### [${t.agent}] (${t.time})\n${t.message}\n\n`;
}

export function formatConsensus(c: ConsensusRecord): string {
  return (
    `---\n\n## Consensus Reached (Round ${c.round})\n**Agreed by**: ${c.agreedBy.join(', ')}\n\n` +
    `### Final Summary\n${c.summary}\n`
  );
}

/** aqm writes nothing when a session runs out of rounds; troupe says so. */
export function formatNoConsensus({ rounds }: { rounds: number }): string {
  return `---\n\n## No Consensus (after ${rounds} ${rounds === 1 ? 'round' : 'rounds'})\n`;
}
