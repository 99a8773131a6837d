import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { example, project, troupe, troupeJson } from './support/troupe.js';

const noHuman = `agents:
  developer: ["Refactored auth into token.ts and session.ts."]
  deployer: ["Ready to deploy 2.0.0 to staging."]
`;

describe('a person in the loop, across processes', () => {
  it('the human-deploy example completes offline when the script answers for the person', async () => {
    const dir = project();
    const { code, json } = await troupeJson(dir, [
      'run',
      'Refactor auth',
      '--file',
      example('human-deploy'),
      '--script',
      example('human-deploy', 'script.yaml'),
    ]);
    expect(code).toBe(0);
    expect(json.stages.map((s) => [s.agent, s.gate?.decision ?? null])).toEqual([
      ['developer', null],
      ['deployer', 'approved'],
    ]);
    expect(json.stages[0]!.output).toContain('token.ts');
  });

  it('without scripted answers it waits (exit 6), holding no process, and each answer from any shell carries it on', async () => {
    const dir = project({ 's.yaml': noHuman });
    const file = example('human-deploy');
    const first = await troupeJson(dir, ['run', 'Refactor auth', '--file', file, '--script', 's.yaml']);
    expect(first.code).toBe(6);
    expect(first.json.status).toBe('awaiting_human_input');
    expect(first.json.waiting).toMatchObject({
      kind: 'question',
      agent: 'developer',
      questions: ['What features do you want? Any constraints?'],
    });
    const id = first.json.id;

    const waiting = await troupe(dir, ['list', '--waiting']);
    expect(waiting.stdout).toContain(id);
    expect(waiting.stdout).toContain('What features do you want?');

    const answered = await troupeJson(dir, ['human-input', id, 'keep', 'the', 'API']);
    expect(answered.code).toBe(6);
    expect(answered.json.status).toBe('awaiting_gate');
    expect(answered.json.stages[0]!.status).toBe('completed');

    const rejected = await troupe(dir, ['reject', id]);
    expect(rejected.code).toBe(2); // a rejection needs -r

    const approved = await troupeJson(dir, ['approve', id, '-r', 'LGTM']);
    expect(approved.code).toBe(0);
    expect(approved.json.status).toBe('completed');
    expect(approved.json.stages[1]!.gate).toMatchObject({ decision: 'approved', reason: 'LGTM' });
    const context = (await troupe(dir, ['context', id])).stdout;
    expect(context).toContain('## [human input] for developer');
    expect(context).toContain('keep the API');
  });

  it('a person’s rejection sends the work back with the reason', async () => {
    const dir = project({
      'p.yaml': `agents:
  - id: writer
    runtime: claude
    system_prompt: "{{ input }}"
    gate: {type: human}
`,
      's.yaml': 'agents:\n  writer: ["draft 1", "draft 2"]\n',
    });
    const first = await troupeJson(dir, ['run', 'write', '--file', 'p.yaml', '--script', 's.yaml']);
    expect(first.code).toBe(6);
    const again = await troupeJson(dir, ['reject', first.json.id, '-r', 'too long']);
    expect(again.code).toBe(6);
    expect(again.json.stages.map((s) => s.output)).toEqual(['draft 1', 'draft 2']);
    expect(again.json.stages[1]!.status).toBe('awaiting_gate');
    const done = await troupeJson(dir, ['approve', first.json.id]);
    expect(done.json.status).toBe('completed');
  });

  it('--interactive asks at the prompt instead of exiting, and a rejection there sends the work back', async () => {
    const dir = project({
      'p.yaml': `agents:
  - id: writer
    runtime: claude
    system_prompt: "{{ input }}"
    human_input: {mode: before, prompt: "Audience?"}
    gate: {type: human}
`,
      's.yaml': 'agents:\n  writer: ["draft 1", "draft 2"]\n',
    });
    const run = await troupe(
      dir,
      ['run', 'write', '--file', 'p.yaml', '--script', 's.yaml', '--interactive'],
      {},
      // an empty line and a typo are asked again, never taken for a rejection
      'engineers\n\nyy\nn\ntoo long\nnope\ny\n',
    );
    expect(run.stderr).toContain('? writer: Audience?');
    expect(run.stderr.match(/please answer y \(approve\) or n \(reject\)/g)).toHaveLength(3);
    expect(run.code).toBe(0);
    const id = /troupe (T-[0-9A-F]{6})/.exec(run.stderr)![1]!;
    const status = await troupeJson(dir, ['status', id]);
    expect(status.json.stages.map((s) => [s.output, s.gate?.decision, s.gate?.reason])).toEqual([
      ['draft 1', 'rejected', 'too long'],
      ['draft 2', 'approved', ''],
    ]);
    expect(status.json.stages[0]!.input).toContain('--- User Input ---\nengineers');
  });

  it('--interactive with no one at the prompt (end of input) leaves the task waiting, exit 6', async () => {
    const dir = project({ 's.yaml': noHuman });
    const run = await troupe(
      dir,
      ['run', 'x', '--file', example('human-deploy'), '--script', 's.yaml', '--interactive'],
      {},
      '',
    );
    expect(run.code).toBe(6);
  });

  it('approving a task that is not at a gate is refused and changes nothing', async () => {
    const dir = project({ 's.yaml': noHuman });
    const first = await troupeJson(dir, [
      'run',
      'x',
      '--file',
      example('human-deploy'),
      '--script',
      's.yaml',
    ]);
    const refused = await troupe(dir, ['approve', first.json.id]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('not waiting at a gate');
    expect((await troupeJson(dir, ['status', first.json.id])).json).toEqual(first.json);
    writeFileSync(join(dir, 'unused'), '');
  });
});
