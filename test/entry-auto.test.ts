import { describe, expect, it } from 'vitest';
import { eventLog, project, troupe, troupeJson } from './support/troupe.js';

const pipeline = `entry_point: auto
agents:
  - id: triage
    runtime: claude
    system_prompt: "General questions: {{ input }}"
  - id: billing
    runtime: claude
    system_prompt: "Invoices and refunds: {{ input }}"
  - id: tech
    runtime: claude
    system_prompt: "Bugs and outages: {{ input }}"
`;

describe('entry_point: auto', () => {
  it('a router call picks the first agent (the script’s _router entry)', async () => {
    const dir = project({
      'p.yaml': pipeline,
      's.yaml': 'agents:\n  _router: ["billing"]\n  billing: ["refund issued"]\n',
    });
    const { code, json } = await troupeJson(dir, [
      'run',
      'I was charged twice',
      '--file',
      'p.yaml',
      '--script',
      's.yaml',
    ]);
    expect(code).toBe(0);
    expect(json.stages.map((s) => s.agent)).toEqual(['billing']);
    const routed = eventLog(dir, json.id).find((e) => e.type === 'entry_routed');
    expect(routed?.data).toMatchObject({ agent: 'billing', fallback: false });
  });

  it('an answer that names no agent falls back to the first agent, and the events say so', async () => {
    const dir = project({
      'p.yaml': pipeline,
      's.yaml': 'agents:\n  _router: ["no idea, sorry"]\n  triage: ["triaged"]\n',
    });
    const run = await troupe(dir, ['run', 'hello', '--file', 'p.yaml', '--script', 's.yaml']);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('the router named no agent ("no idea, sorry"); starting with triage');
    const id = /troupe (T-[0-9A-F]{6})/.exec(run.stderr)![1]!;
    expect(eventLog(dir, id).find((e) => e.type === 'entry_routed')?.data).toMatchObject({
      agent: 'triage',
      fallback: true,
    });
  });

  it('--agent skips the router', async () => {
    const dir = project({ 'p.yaml': pipeline, 's.yaml': 'agents:\n  tech: ["rebooted"]\n' });
    const { json } = await troupeJson(dir, [
      'run',
      'x',
      '--file',
      'p.yaml',
      '--script',
      's.yaml',
      '--agent',
      'tech',
    ]);
    expect(json.stages.map((s) => s.agent)).toEqual(['tech']);
    expect(eventLog(dir, json.id).some((e) => e.type === 'entry_routed')).toBe(false);
  });
});
