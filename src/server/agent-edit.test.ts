import { describe, expect, it } from 'vitest';
import { addAgent, agentsInFile, removeAgent, updateAgent } from './agent-edit.js';

const file = `# the team
agents:
  - id: writer # w
    runtime: claude
    system_prompt: |
      Write: {{ input }}
    handoffs: [{ to: editor }]
  # the editor
  - id: editor
    runtime: claude
`;

describe('editing one agent of a pipeline file', () => {
  it('appends a new agent in block style and leaves the rest of the file byte for byte', () => {
    const { text } = addAgent(file, {
      id: 'reviewer',
      runtime: 'gemini',
      system_prompt: 'Review: {{ input }}',
      handoffs: [
        { to: 'writer', condition: 'on_reject' },
        { to: 'editor', condition: 'always' },
      ],
      gate: { type: 'llm', prompt: 'ok?', max_retries: '2' },
      human_input: { enabled: true, mode: 'before' },
      context_strategy: '',
    });
    expect(text.slice(0, file.length)).toBe(file);
    expect(text.slice(file.length)).toBe(
      [
        '  - id: reviewer',
        '    runtime: gemini',
        '    system_prompt: "Review: {{ input }}"',
        '    handoffs:',
        '      - to: writer',
        '        condition: on_reject',
        '      - to: editor',
        '    gate:',
        '      type: llm',
        '      prompt: ok?',
        '      max_retries: 2',
        '    human_input: before',
        '',
      ].join('\n'),
    );
  });

  it('changes only the fields sent, keeps a block prompt a block, renames, removes', () => {
    const { text, id } = updateAgent(file, 'writer', {
      id: 'author',
      system_prompt: 'Write well: {{ input }}\n',
      handoffs: null,
    });
    expect(id).toBe('author');
    expect(text).toBe(
      file
        .replace('id: writer # w', 'id: author # w')
        .replace('Write: {{ input }}', 'Write well: {{ input }}')
        .replace('    handoffs: [{ to: editor }]\n', ''),
    );
    expect(removeAgent(file, 'editor')).toBe(
      file.replace('  # the editor\n  - id: editor\n    runtime: claude\n', ''),
    );
    expect(agentsInFile(file).map((a) => a.id)).toEqual(['writer', 'editor']);
  });

  it('refuses an unknown agent, a taken id and a file that is not YAML', () => {
    expect(() => updateAgent(file, 'ghost', {})).toThrow(/no agent "ghost"/);
    expect(() => addAgent(file, { id: 'editor' })).toThrow(/already has an agent "editor"/);
    expect(() => addAgent('agents: [', { id: 'x' })).toThrow(/not valid YAML/);
  });
});
