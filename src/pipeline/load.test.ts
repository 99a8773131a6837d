import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NotFoundError, PipelineError } from '../core/errors.js';
import type { AgentNode, SessionNode } from '../core/pipeline.js';
import { RUNTIME_NAMES } from '../core/runtimes.js';
import { loadPipeline, loadPipelineText } from './load.js';
import { removeTempDirs, tempDir, validateYaml } from './test-files.js';

afterEach(removeTempDirs);

function thrown(fn: () => unknown): PipelineError {
  try {
    fn();
  } catch (error) {
    if (error instanceof PipelineError) return error;
    throw error;
  }
  throw new Error('expected a PipelineError');
}

describe('loadPipelineText: errors carry the position of the YAML node', () => {
  it('a YAML syntax error', () => {
    const error = thrown(() => loadPipelineText('agents:\n  - id: a\n    runtime: [claude\n', 'p.yaml'));
    expect(error.code).toBe('pipeline_invalid');
    expect(error.message).toMatch(/^p\.yaml:4:1: YAML syntax error: /);
  });

  it.each([
    ['"', 'system_prompt: "unclosed'],
    ["'", "system_prompt: 'it''s unclosed"],
  ])('an unclosed %s quote: where it opens, not where the file ends', (_quote, line) => {
    const text = `agents:\n  - id: a\n    runtime: claude\n    ${line}\n  - id: b\n    runtime: claude\n\n`;
    const error = thrown(() => loadPipelineText(text, 'p.yaml'));
    expect([error.line, error.col]).toEqual([4, 20]);
    expect(error.detail).toMatch(/YAML syntax error: Missing closing .quote/);
  });

  it('a duplicate key', () => {
    const error = thrown(() => loadPipelineText('agents:\n  - id: a\n    id: b\n', 'p.yaml'));
    expect([error.line, error.col]).toEqual([3, 5]);
    expect(error.detail).toMatch(/YAML syntax error: Map keys must be unique/);
    expect(error.hint).toBe('each key may appear once per mapping');
  });

  it('an unknown field, at its key, with the nearest known field as hint', () => {
    const error = thrown(() =>
      loadPipelineText('agents:\n  - id: a\n    runtime: claude\n    sytem_prompt: hi\n', 'p.yaml'),
    );
    expect(error.message).toBe('p.yaml:4:5: unknown field `sytem_prompt` in `agents[0]`');
    expect(error.hint).toBe('did you mean `system_prompt`?');
  });

  it('a value of the wrong kind, at the value', () => {
    const error = thrown(() =>
      loadPipelineText('agents:\n  - id: a\n    runtime: claude\n    context_window: many\n', 'p.yaml'),
    );
    expect(error.message).toBe('p.yaml:4:21: `agents[0].context_window` must be a number, not "many"');
  });

  it('a quoted number, with the fix as hint', () => {
    const error = thrown(() =>
      loadPipelineText('agents:\n  - id: a\n    runtime: claude\n    context_window: "3"\n', 'p.yaml'),
    );
    expect(error.message).toBe('p.yaml:4:21: `agents[0].context_window` must be a number, not "3"');
    expect(error.hint).toBe('write the number without quotes');
  });

  it('a value outside an enum, with a suggestion', () => {
    const error = thrown(() => loadPipelineText('agents:\n  - id: a\n    runtime: cluade\n', 'p.yaml'));
    expect(error.message).toBe(
      `p.yaml:3:14: \`agents[0].runtime\` must be one of ${RUNTIME_NAMES.join(', ')}, not "cluade"`,
    );
    expect(error.hint).toBe('did you mean `claude`?');
  });

  it('a missing required field, at its mapping', () => {
    const error = thrown(() => loadPipelineText('agents:\n  - runtime: claude\n', 'p.yaml'));
    expect(error.message).toBe('p.yaml:2:5: missing required field `id`');
  });

  it('a problem inside a shorthand-or-mapping field is reported inside the mapping', () => {
    const error = thrown(() =>
      loadPipelineText(
        'agents:\n  - id: a\n    runtime: claude\n    human_input:\n      mode: later\n',
        'p.yaml',
      ),
    );
    expect(error.message).toBe(
      'p.yaml:5:13: `agents[0].human_input.mode` must be one of before, on_demand, both, not "later"',
    );
  });

  it('human_input: false, with what is allowed', () => {
    const error = thrown(() =>
      loadPipelineText('agents:\n  - id: a\n    runtime: claude\n    human_input: false\n', 'p.yaml'),
    );
    expect(error.message).toMatch(/^p\.yaml:4:18: `agents\[0\]\.human_input`: human_input is true, "before"/);
  });

  it('a command gate without command', () => {
    const error = thrown(() =>
      loadPipelineText('agents:\n  - id: a\n    runtime: claude\n    gate:\n      type: command\n', 'p.yaml'),
    );
    expect(error.message).toBe(
      'p.yaml:5:7: `agents[0].gate.command`: a gate of type command needs a `command`',
    );
  });

  it('an empty file and a file that is not a mapping', () => {
    expect(thrown(() => loadPipelineText('', 'p.yaml')).message).toBe(
      'p.yaml:1:1: the pipeline file is empty',
    );
    expect(thrown(() => loadPipelineText('- id: a\n', 'p.yaml')).detail).toBe(
      'a pipeline must be a mapping with an `agents:` list',
    );
  });

  it('says how many more errors there are', () => {
    const error = thrown(() => loadPipelineText('agents:\n  - id: a\n    foo: 1\n    bar: 2\n', 'p.yaml'));
    expect(error.hint).toContain('2 more errors: run `troupe validate` to see all');
  });
});

describe('loadPipelineText: normalization', () => {
  const yaml = `
agents:
  - id: code_reviewer-v2x
    runtime: claude
    handoffs:
      - to: " qa ,docs"
      - { to: qa, condition: on_approve, payload: "{{ output }}!", task: t }
    gate: {}
    mcp: [github, { server: fs, args: [/tmp] }, { server: docs, url: "https://mcp.example.com/mcp", headers: { X-Key: k } }]
    claude_code_flags: [--old]
    human_input: true
  - id: qa
    name: Quality
    runtime: gemini
    cli_flags: [--new]
    claude_code_flags: [--old]
    human_input: before
    retry: {}
  - id: docs
    runtime: codex
    human_input: { prompt: "What?" }
  - id: talk
    type: session
    participants: [qa, docs]
`;
  const pipeline = loadPipelineText(yaml, '/work/p/dev.yaml');
  const [reviewer, qa, docs, talk] = pipeline.agents as [AgentNode, AgentNode, AgentNode, SessionNode];

  it('fills the pipeline-level defaults', () => {
    expect(pipeline).toMatchObject({
      name: 'dev',
      file: '/work/p/dev.yaml',
      apiVersion: null,
      entry_point: 'first',
      params: {},
      paramDefinitions: {},
    });
    expect(loadPipelineText(yaml, '/work/p/dev.yaml', { name: 'review' }).name).toBe('review');
  });

  it('derives a name from the id as aqm does (Python title case)', () => {
    expect(reviewer.name).toBe('Code Reviewer V2X');
    expect(qa.name).toBe('Quality');
  });

  it('splits and trims comma targets and fills handoff defaults', () => {
    expect(reviewer.handoffs).toEqual([
      { to: ['qa', 'docs'], task: '', condition: 'always', payload: '{{ output }}' },
      { to: ['qa'], task: 't', condition: 'on_approve', payload: '{{ output }}!' },
    ]);
  });

  it('fills agent defaults', () => {
    expect(docs).toMatchObject({
      type: 'agent',
      model: null,
      system_prompt: '',
      gate: null,
      mcp: [],
      cli_flags: [],
      context_strategy: 'both',
      context_window: 3,
      retry: null,
      timeout: null,
      chunks: null,
      permissions: null,
      effort: null,
      resume: false,
      command: null,
      openai: null,
    });
    expect(reviewer.gate).toEqual({
      type: 'llm',
      prompt: '',
      model: null,
      max_retries: 3,
      command: null,
      timeout: null,
      runtime: null,
      verifier: null,
    });
    expect(qa.retry).toEqual({ max_retries: 2, fallback_context_strategy: null, backoff: 10 });
  });

  it('reads the runtime fields: permissions, effort, resume, command, openai, gate runtime', () => {
    const pipeline = loadPipelineText(
      [
        'agents:',
        '  - id: dev',
        '    runtime: claude',
        '    permissions: edit',
        '    effort: high',
        '    resume: true',
        '    gate: { type: llm, runtime: gemini, model: gemini-2.5-pro }',
        '  - id: fmt',
        '    runtime: command',
        '    command: [npx, prettier, --write, .]',
        '  - id: local',
        '    runtime: openai',
        '    model: llama3.2',
        '    openai: { base_url: "http://localhost:11434/v1" }',
      ].join('\n'),
      'p.yaml',
    );
    const [dev, fmt, local] = pipeline.agents as AgentNode[];
    expect(dev).toMatchObject({
      permissions: 'edit',
      effort: 'high',
      resume: true,
      gate: { runtime: 'gemini' },
    });
    expect(fmt!.command).toEqual(['npx', 'prettier', '--write', '.']);
    expect(local!.openai).toEqual({ base_url: 'http://localhost:11434/v1', api_key_env: null });
  });

  it('needs a command for runtime command, and a known permission', () => {
    expect(
      thrown(() => loadPipelineText('agents:\n  - id: a\n    runtime: command\n', 'p.yaml')).message,
    ).toBe('p.yaml:3:14: agent `a` has runtime command but no `command`');
    expect(
      thrown(() =>
        loadPipelineText('agents:\n  - id: a\n    runtime: claude\n    permissions: write\n', 'p.yaml'),
      ).message,
    ).toContain('must be one of read_only, edit, full');
  });

  it('expands the mcp and human_input shorthands', () => {
    expect(reviewer.mcp).toEqual([
      { server: 'github', command: null, args: [], env: null },
      { server: 'fs', command: null, args: ['/tmp'], env: null },
      {
        server: 'docs',
        command: null,
        args: [],
        env: null,
        url: 'https://mcp.example.com/mcp',
        headers: { 'X-Key': 'k' },
        transport: 'http',
      },
    ]);
    expect(reviewer.human_input).toEqual({ enabled: true, mode: 'on_demand', prompt: '' });
    expect(qa.human_input).toEqual({ enabled: true, mode: 'before', prompt: '' });
    expect(docs.human_input).toEqual({ enabled: true, mode: 'on_demand', prompt: 'What?' });
  });

  it('reads the deprecated claude_code_flags only when cli_flags is not set', () => {
    expect(reviewer.cli_flags).toEqual(['--old']);
    expect(qa.cli_flags).toEqual(['--new']);
  });

  it('fills session defaults', () => {
    expect(talk).toMatchObject({
      type: 'session',
      participants: ['qa', 'docs'],
      turn_order: 'round_robin',
      max_rounds: 10,
      consensus: { method: 'vote', keyword: 'VOTE: AGREE', require: 'all', require_chunks_done: false },
      summary_agent: null,
      chunks: null,
      system_prompt: '',
    });
  });

  it('records where each agent was defined', () => {
    expect(reviewer.source).toEqual({ file: '/work/p/dev.yaml', line: 3, col: 5 });
    expect(talk.source).toEqual({ file: '/work/p/dev.yaml', line: 22, col: 5 });
  });
});

describe('loadPipeline', () => {
  it('reads the file and resolves its path', () => {
    const dir = tempDir({ 'team.yaml': 'agents:\n  - id: a\n    runtime: claude\n' });
    const pipeline = loadPipeline(path.join(dir, 'team.yaml'));
    expect(pipeline.file).toBe(path.join(dir, 'team.yaml'));
    expect(pipeline.name).toBe('team');
  });

  it('a missing file is NotFound', () => {
    expect(() => loadPipeline('/nonexistent/agents.yaml')).toThrow(NotFoundError);
  });

  it('YAML merge keys inside the agents list work', () => {
    const { pipeline } = validateYaml(
      'agents:\n  - &base\n    id: a\n    runtime: claude\n  - <<: *base\n    id: b\n',
    );
    expect(pipeline?.agents.map((a) => [a.id, a.type === 'agent' && a.runtime])).toEqual([
      ['a', 'claude'],
      ['b', 'claude'],
    ]);
  });
});
