import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DiagnosticSink } from '../diagnostics.js';
import { readWorkflow, resolveSecret, splitWorkflow } from './workflow.js';

const FIXTURE = 'test/fixtures/symphony/elixir-WORKFLOW.md';

function read(text: string) {
  const sink = new DiagnosticSink();
  const workflow = readWorkflow(text, 'WORKFLOW.md', sink);
  return { workflow, diagnostics: sink.list() };
}

describe("Symphony's WORKFLOW.md", () => {
  it("reads Symphony's own elixir/WORKFLOW.md: its settings, defaults, and what troupe ignores", () => {
    const { workflow, diagnostics } = read(readFileSync(FIXTURE, 'utf8'));
    expect(diagnostics).toEqual([]);
    const s = workflow!.settings;
    expect(s.tracker).toMatchObject({
      kind: 'linear',
      project_slug: 'yansen-symphony-b1cf2e8198aa',
      endpoint: 'https://api.linear.app/graphql',
      api_key: { env: 'LINEAR_API_KEY' },
      active_states: ['Todo', 'In Progress', 'Merging', 'Rework'],
      terminal_states: ['Closed', 'Cancelled', 'Canceled', 'Duplicate', 'Done'],
      required_labels: [],
    });
    expect(s.polling.interval_ms).toBe(5000);
    expect(s.workspace.root).toBe('~/.codex/worktrees/symphony');
    expect(s.hooks.timeout_ms).toBe(900000);
    expect(s.hooks.after_create).toMatch(/^set -eu\n/);
    expect(s.hooks.before_run).toBeNull();
    expect(s.agent).toEqual({
      max_concurrent_agents: 10,
      max_turns: 20,
      max_retry_backoff_ms: 300000,
      max_concurrent_agents_by_state: {},
    });
    expect(s.codex).toMatchObject({
      model: 'gpt-5.5',
      reasoning_effort: 'xhigh',
      thread_sandbox: 'danger-full-access',
      read_timeout_ms: 60000,
      turn_timeout_ms: 3600000,
      stall_timeout_ms: 300000,
    });
    expect(workflow!.ignored.map((i) => `${i.key}@${i.at.line}:${i.at.col}`)).toEqual([
      'codex.service_tier@45:3',
      'codex.attach_worktree_owner@50:3',
    ]);
    expect(workflow!.prompt).toMatch(/^You are working on a Linear ticket `\{\{ issue.identifier \}\}`/);
    expect(workflow!.prompt.endsWith('````')).toBe(true);
    expect(workflow!.promptAt).toMatchObject({ line: 54, col: 1 });
  });

  it('reads a file with no front matter as all prompt, with every default', () => {
    const { workflow, diagnostics } = read('\n\n  Fix {{ issue.title }}\n');
    expect(diagnostics).toEqual([]);
    expect(workflow!.prompt).toBe('Fix {{ issue.title }}');
    expect(workflow!.promptAt).toMatchObject({ line: 3, col: 3 });
    expect(workflow!.settings.tracker.kind).toBeNull();
    expect(workflow!.settings.polling.interval_ms).toBe(30000);
    expect(workflow!.settings.codex.command).toBe('codex app-server');
    expect(workflow!.settings.codex.approval_policy).toEqual({
      reject: { sandbox_approval: true, rules: true, mcp_elicitations: true },
    });
  });

  it('reads a front matter of comments only, and a byte order mark, as no settings', () => {
    const { workflow, diagnostics } = read('\uFEFF---\n# settings later\n---\nDo it');
    expect(diagnostics).toEqual([]);
    expect(workflow!.prompt).toBe('Do it');
    expect(workflow!.settings.agent.max_concurrent_agents).toBe(10);
  });

  it('takes an unclosed front matter as all settings and no prompt, as Symphony does', () => {
    expect(splitWorkflow('---\npolling:\n  interval_ms: 5\n')).toMatchObject({ prompt: '' });
    expect(read('---\npolling:\n  interval_ms: 5\n').workflow!.settings.polling.interval_ms).toBe(5);
  });

  it('reads the newer tracker.provider settings, comma-separated states and required labels', () => {
    const { workflow, diagnostics } = read(
      [
        '---',
        'tracker:',
        '  kind: linear',
        '  provider:',
        '    project_slug: my-project-4c1a9f3b7e02',
        '    api_key: $MY_LINEAR_KEY',
        '    team_keys: [ENG]',
        '  active_states: "Todo, In Progress"',
        '  required_labels: [agent:ok]',
        'agent:',
        '  max_concurrent_agents: "3"',
        '  max_concurrent_agents_by_state: { " In Progress ": 2 }',
        '---',
        'x',
      ].join('\n'),
    );
    expect(diagnostics).toEqual([]);
    expect(workflow!.settings.tracker).toMatchObject({
      project_slug: 'my-project-4c1a9f3b7e02',
      api_key: { env: 'MY_LINEAR_KEY' },
      active_states: ['Todo', 'In Progress'],
      required_labels: ['agent:ok'],
      provider: { team_keys: ['ENG'] },
    });
    expect(workflow!.settings.agent.max_concurrent_agents).toBe(3);
    expect(workflow!.settings.agent.max_concurrent_agents_by_state).toEqual({ 'in progress': 2 });
    expect(resolveSecret(workflow!.settings.tracker.api_key, { MY_LINEAR_KEY: 'k' })).toBe('k');
    expect(resolveSecret(workflow!.settings.tracker.api_key, { MY_LINEAR_KEY: '' })).toBeNull();
  });

  it('refuses front matter that is not a map, at its position', () => {
    const { workflow, diagnostics } = read('---\n- a\n- b\n---\nprompt');
    expect(workflow).toBeUndefined();
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toMatchObject({ line: 2, col: 1 });
    expect(diagnostics[0]!.message).toMatch(/^workflow_front_matter_not_a_map: the front matter is a list/);
  });

  it('locates YAML errors and bad settings in the file', () => {
    expect(read('---\ntracker:\n  kind: linear\n kind: x\n---\n').diagnostics[0]).toMatchObject({
      severity: 'error',
      line: 4,
    });
    const { diagnostics } = read(
      '---\ntracker:\n  kind: github\npolling:\n  interval_ms: 0\ncodex:\n  stall_timeout_ms: -1\n---\nx',
    );
    expect(diagnostics.map((d) => `${d.line}:${d.col} ${d.message}`)).toEqual([
      '3:9 tracker.kind `github` is not one Symphony knows',
      '5:16 polling.interval_ms must be an integer greater than 0, not 0',
      '7:21 codex.stall_timeout_ms must be an integer of 0 or more, not -1',
    ]);
  });

  it('requires a Linear project, and warns of a secret written out without ever keeping it elsewhere', () => {
    const { diagnostics, workflow } = read('---\ntracker:\n  kind: linear\n  api_key: lin_api_123\n---\nx');
    expect(diagnostics.map((d) => `${d.severity} ${d.line}:${d.col}`)).toEqual(['error 2:1', 'warning 4:12']);
    expect(diagnostics.map((d) => d.message).join('\n')).not.toContain('lin_api_123');
    expect(workflow!.settings.tracker.api_key).toEqual({ literal: 'lin_api_123' });
  });

  it('lists unknown and Symphony-only keys as ignored, never as errors', () => {
    const { workflow, diagnostics } = read(
      '---\nserver:\n  port: 4000\nfuture: 1\nhooks:\n  on_merge: x\n---\nx',
    );
    expect(diagnostics).toEqual([]);
    expect(workflow!.ignored.map((i) => `${i.key}@${i.at.line}`)).toEqual([
      'server@2',
      'future@4',
      'hooks.on_merge@6',
    ]);
  });
});
