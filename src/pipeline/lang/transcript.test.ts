import { describe, expect, it } from 'vitest';
import {
  formatConsensus,
  formatNoConsensus,
  formatRoundHeader,
  formatTranscriptHeader,
  formatTurn,
} from './transcript.js';

describe('transcript.md', () => {
  it('puts together a whole session in aqm format', () => {
    const transcript =
      formatTranscriptHeader({
        topic: 'Pick a DB',
        participants: ['architect', 'critic'],
        started: '2026-03-27T10:00:00+00:00',
      }) +
      formatRoundHeader(1) +
      formatTurn({ agent: 'architect', time: '10:00:05', message: 'SQLite.' }) +
      formatTurn({ agent: 'critic', time: '10:00:09', message: 'Agreed. VOTE: AGREE' }) +
      formatConsensus({ round: 1, agreedBy: ['architect', 'critic'], summary: 'Use SQLite.' });
    expect(transcript).toBe(
      [
        '# Meeting Transcript',
        '**Topic**: Pick a DB',
        '**Participants**: architect, critic',
        '**Started**: 2026-03-27T10:00:00+00:00',
        '',
        '---',
        '',
        '## Round 1',
        '',
        '### [architect] (10:00:05)',
        'SQLite.',
        '',
        '### [critic] (10:00:09)',
        'Agreed. VOTE: AGREE',
        '',
        '---',
        '',
        '## Consensus Reached (Round 1)',
        '**Agreed by**: architect, critic',
        '',
        '### Final Summary',
        'Use SQLite.',
        '',
      ].join('\n'),
    );
  });

  it('records a session that ran out of rounds', () => {
    expect(formatNoConsensus({ rounds: 3 })).toBe('---\n\n## No Consensus (after 3 rounds)\n');
    expect(formatNoConsensus({ rounds: 1 })).toBe('---\n\n## No Consensus (after 1 round)\n');
  });
});
