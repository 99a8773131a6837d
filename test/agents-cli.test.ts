import { describe, expect, it } from 'vitest';
import { eventLog, example, project, troupe, troupeJson } from './support/troupe.js';

describe('troupe agents', () => {
  it('shows each agent with its runtime, gate and handoff edges', async () => {
    const dir = project();
    const { code, stdout } = await troupe(dir, ['agents', '--file', example('dev-team')]);
    expect(code).toBe(0);
    expect(stdout).toContain('reviewer  gemini  gate: llm');
    expect(stdout).toContain('  → deployer (on_approve)');
    expect(stdout).toContain('  → developer (on_reject)');
  });

  it('renders sessions with their participants, and mermaid with labelled edges', async () => {
    const dir = project();
    const text = await troupe(dir, ['agents', '--file', example('design-session')]);
    expect(text.stdout).toContain('design_session  session [architect, security] summary: architect');
    const mermaid = await troupe(dir, ['agents', '--file', example('dev-team'), '--format', 'mermaid']);
    expect(mermaid.stdout.split('\n')[0]).toBe('flowchart TD');
    expect(mermaid.stdout).toContain('reviewer -->|on_reject| developer');
    const session = await troupe(dir, ['agents', '--file', example('design-session'), '--format', 'mermaid']);
    expect(session.stdout).toContain('design_session -.- architect');
  });
});

describe('streamed output', () => {
  it('a slow reply reaches the event log in pieces while the stage runs', async () => {
    const dir = project({
      'p.yaml': 'agents:\n  - id: a\n    runtime: claude\n',
      's.yaml': 'agents:\n  a: [{reply: "one\\ntwo\\nthree\\nfour\\n", delay_ms: 1600}]\n',
    });
    const { json } = await troupeJson(dir, ['run', 'x', '--file', 'p.yaml', '--script', 's.yaml']);
    const pieces = eventLog(dir, json.id).filter((e) => e.type === 'stage_output');
    expect(pieces.length).toBeGreaterThanOrEqual(2);
    const streamed = pieces.map((p) => p.data.text).join('');
    expect('one\ntwo\nthree\nfour\n'.startsWith(streamed)).toBe(true);
    expect(json.stages[0]!.output).toBe('one\ntwo\nthree\nfour\n');
  });

  it('answering a question twice: the second answer is refused and changes nothing', async () => {
    const dir = project({
      'p.yaml':
        'agents:\n  - id: a\n    runtime: claude\n    human_input: {mode: before, prompt: "Which?"}\n    gate: {type: human}\n',
      's.yaml': 'agents:\n  a: ["done"]\n',
    });
    const first = await troupeJson(dir, ['run', 'x', '--file', 'p.yaml', '--script', 's.yaml']);
    const answered = await troupeJson(dir, ['human-input', first.json.id, 'this one']);
    expect(answered.json.status).toBe('awaiting_gate');
    const again = await troupe(dir, ['human-input', first.json.id, 'that one']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('is not waiting for an answer');
    expect((await troupeJson(dir, ['status', first.json.id])).json).toEqual(answered.json);
  });
});
