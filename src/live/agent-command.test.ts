import { describe, expect, it } from 'vitest';
import { agentLaunch } from './agent-command.js';

const id = () => 'new-id';

describe('how each CLI is launched and resumed', () => {
  it('claude: the instruction as an appended system prompt; troupe picks the id, then resumes it', () => {
    expect(agentLaunch('claude', ['claude', '--permission-mode', 'acceptEdits'], 'I', null, id)).toEqual({
      argv: [
        'claude',
        '--permission-mode',
        'acceptEdits',
        '--session-id',
        'new-id',
        '--append-system-prompt',
        'I',
      ],
      conversationId: 'new-id',
      resumed: false,
    });
    expect(agentLaunch('claude', ['claude'], 'I', 'c1', id).argv).toEqual([
      'claude',
      '--resume',
      'c1',
      '--append-system-prompt',
      'I',
    ]);
  });

  it('gemini: a chosen id and the instruction as the first prompt; a relaunch resumes that id only', () => {
    expect(agentLaunch('gemini', ['gemini'], 'I', null, id).argv).toEqual([
      'gemini',
      '--session-id',
      'new-id',
      '-i',
      'I',
    ]);
    expect(agentLaunch('gemini', ['gemini', '-m', 'x'], 'I', 'g1', id)).toEqual({
      argv: ['gemini', '-m', 'x', '--resume', 'g1'],
      conversationId: 'g1',
      resumed: true,
    });
  });

  it('codex: the instruction as the first prompt, its own id unknown until found; `codex resume <id>`', () => {
    expect(agentLaunch('codex', ['codex', '--sandbox', 'workspace-write'], 'I', null, id)).toEqual({
      argv: ['codex', '--sandbox', 'workspace-write', 'I'],
      conversationId: null,
      resumed: false,
    });
    expect(agentLaunch('codex', ['codex', '--sandbox', 'workspace-write'], 'I', 'x1', id).argv).toEqual([
      'codex',
      'resume',
      '--sandbox',
      'workspace-write',
      'x1',
    ]);
  });
});
