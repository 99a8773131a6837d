import { describe, expect, it } from 'vitest';
import { AgentSchema, PipelineSchema } from './schema.js';

/** Every field aqm accepts, plus troupe's additions, in one pipeline. */
const everything = {
  apiVersion: 'aqm/v0.1',
  entry_point: 'auto',
  params: {
    model: 'sonnet',
    rounds: 3,
    strict: true,
    nothing: null,
    project_path: {
      type: 'string',
      default: '.',
      required: true,
      description: 'root',
      prompt: 'Project root?',
      auto_detect: 'git rev-parse --show-toplevel',
    },
  },
  imports: [{ from: './shared.yaml', agents: ['security_reviewer'] }, { from: 'all.yaml' }],
  agents: [
    {
      id: 'planner',
      name: 'The Planner',
      type: 'agent',
      runtime: 'claude',
      model: 'claude-sonnet-4',
      system_prompt: 'Plan: {{ input }}',
      handoffs: [
        { to: 'qa, docs', task: 'review', condition: 'on_approve', payload: '{{ output }}' },
        { to: '*', condition: 'auto' },
        { to: 'qa', condition: 'severity == critical' },
      ],
      gate: { type: 'llm', prompt: 'ok?', model: 'haiku', max_retries: 2, timeout: 30 },
      mcp: ['github', { server: 'fs', command: 'npx', args: ['/tmp'], env: { TOKEN: 'x' } }],
      cli_flags: ['--verbose'],
      claude_code_flags: ['--old'],
      context_strategy: 'last_only',
      context_window: 0,
      human_input: { enabled: true, mode: 'before', prompt: 'What?' },
      retry: { max_retries: 2, fallback_context_strategy: 'none', backoff: 5 },
      timeout: 900,
      abstract: false,
      extends: 'base',
      chunks: { enabled: true, initial: ['a'] },
    },
    { id: 'checker', runtime: 'scripted', gate: { type: 'command', command: 'npm test', timeout: 60 } },
    { id: 'asker', runtime: 'openai', human_input: true },
    { id: 'asker2', runtime: 'gemini', human_input: 'on_demand' },
    {
      id: 'design',
      type: 'session',
      participants: ['planner', 'asker'],
      turn_order: 'moderator',
      max_rounds: 5,
      consensus: {
        method: 'moderator_decides',
        keyword: 'AGREE',
        require: 'majority',
        require_chunks_done: true,
      },
      summary_agent: 'planner',
      chunks: { initial: ['x'] },
      handoffs: [{ to: 'qa', condition: 'on_no_consensus' }],
    },
  ],
};

function withAgent(agent: Record<string, unknown>) {
  return { agents: [{ id: 'a', runtime: 'claude', ...agent }] };
}

describe('PipelineSchema', () => {
  it('accepts every field of aqm and troupe', () => {
    const result = PipelineSchema.safeParse(everything);
    expect(result.error?.issues).toBeUndefined();
  });

  it('accepts troupe/v1 and no apiVersion at all', () => {
    expect(PipelineSchema.safeParse({ ...withAgent({}), apiVersion: 'troupe/v1' }).success).toBe(true);
    expect(PipelineSchema.safeParse(withAgent({})).success).toBe(true);
  });

  it('fills no defaults, so that extends can tell a field that is set from one that is not', () => {
    expect(AgentSchema.parse({ id: 'a' })).toEqual({ id: 'a' });
  });

  it.each([
    ['an unknown top-level key', { ...withAgent({}), name: 'x' }],
    ['an unknown apiVersion', { ...withAgent({}), apiVersion: 'v2' }],
    ['no agents', { agents: [] }],
    ['a bad entry_point', { ...withAgent({}), entry_point: 'last' }],
    ['an import without from', { ...withAgent({}), imports: [{ agents: [] }] }],
    ['an unknown key in an import', { ...withAgent({}), imports: [{ from: 'x', only: [] }] }],
    ['a bad param name', { ...withAgent({}), params: { 'bad name': 1 } }],
    ['a bad param type', { ...withAgent({}), params: { x: { type: 'list' } } }],
    ['an unknown key in a param', { ...withAgent({}), params: { x: { default: 1, secret: true } } }],
    ['a list as param', { ...withAgent({}), params: { x: [1] } }],
  ])('rejects %s', (_, pipeline) => {
    expect(PipelineSchema.safeParse(pipeline).success).toBe(false);
  });
});

describe('AgentSchema', () => {
  it.each([
    ['a typo in a field name (aqm silently dropped it)', { sytem_prompt: 'x' }],
    ['an id with a space', { id: 'my agent' }],
    ['an id starting with a digit', { id: '1st' }],
    ['an unknown type', { type: 'group' }],
    ['an unknown runtime', { runtime: 'gpt' }],
    ['a number as model', { model: 4 }],
    ['a list as system_prompt', { system_prompt: ['x'] }],
    ['a handoff without to', { handoffs: [{ condition: 'always' }] }],
    ['an empty handoff target', { handoffs: [{ to: '' }] }],
    ['an unknown key in a handoff', { handoffs: [{ to: 'b', when: 'always' }] }],
    ['an empty condition', { handoffs: [{ to: 'b', condition: '' }] }],
    ['a gate of unknown type', { gate: { type: 'script' } }],
    ['a command gate without command', { gate: { type: 'command' } }],
    ['gate max_retries 0 (aqm: minimum 1)', { gate: { max_retries: 0 } }],
    ['a negative gate timeout', { gate: { timeout: -1 } }],
    ['an unknown key in a gate', { gate: { retries: 1 } }],
    ['an mcp entry without server', { mcp: [{ command: 'node' }] }],
    ['an mcp env value that is not a string', { mcp: [{ server: 's', env: { PORT: 80 } }] }],
    [
      'an mcp server with both a url and a command',
      { mcp: [{ server: 's', url: 'https://x.io/mcp', command: 'node' }] },
    ],
    ['mcp headers without a url', { mcp: [{ server: 's', command: 'node', headers: { A: 'b' } }] }],
    ['an mcp url that is not http(s)', { mcp: [{ server: 's', url: 'file:///tmp/x' }] }],
    ['an unknown mcp transport', { mcp: [{ server: 's', url: 'https://x.io/mcp', transport: 'ws' }] }],
    ['cli_flags that are not strings', { cli_flags: [1] }],
    ['an unknown context_strategy', { context_strategy: 'all' }],
    ['a negative context_window', { context_window: -1 }],
    ['a fractional context_window', { context_window: 1.5 }],
    ['human_input: false (aqm fails it too)', { human_input: false }],
    ['an unknown human_input mode', { human_input: 'after' }],
    ['an unknown key in human_input', { human_input: { mode: 'before', question: 'x' } }],
    ['a negative retry backoff', { retry: { backoff: -1 } }],
    ['an unknown fallback_context_strategy', { retry: { fallback_context_strategy: 'half' } }],
    ['a zero timeout', { timeout: 0 }],
    ['abstract that is not a boolean', { abstract: 'yes' }],
    ['max_rounds 0', { max_rounds: 0 }],
    ['an unknown turn_order', { turn_order: 'random' }],
    ['an unknown consensus method', { consensus: { method: 'poll' } }],
    ['an unknown consensus require', { consensus: { require: 'some' } }],
    ['chunks.initial that is not a list', { chunks: { initial: 'a' } }],
    ['an upper-case worker label', { worker_labels: ['GPU'] }],
    ['a worker label with a double dash (it would split a lane name)', { worker_labels: ['eu--west'] }],
    ['worker_labels that are not a list', { worker_labels: 'gpu' }],
  ])('rejects %s', (_, fields) => {
    expect(AgentSchema.safeParse({ id: 'a', ...fields }).success).toBe(false);
  });

  it.each([
    [
      'null for the nullable fields',
      { model: null, gate: null, retry: null, human_input: null, extends: null },
    ],
    ['an expression condition', { handoffs: [{ to: 'b', condition: 'score >= 80 and not blocked' }] }],
    ['a bare mcp server name', { mcp: ['github'] }],
    [
      'a remote mcp server',
      { mcp: [{ server: 'docs', url: 'https://x.io/sse', headers: { A: 'b' }, transport: 'sse' }] },
    ],
    ['human_input: true', { human_input: true }],
    ['human_input as a mode', { human_input: 'both' }],
    ['human_input as a mapping', { human_input: { enabled: false } }],
    ['a command gate with its command', { gate: { type: 'command', command: 'make check' } }],
  ])('accepts %s', (_, fields) => {
    expect(AgentSchema.safeParse({ id: 'a', ...fields }).error?.issues).toBeUndefined();
  });
});
