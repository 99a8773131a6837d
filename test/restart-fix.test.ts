import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { project, type TaskJson, troupe, troupeJson } from './support/troupe.js';

const agents = ['plan', 'build', 'review', 'docs', 'ship', 'announce'];
const pipelineYaml = `agents:\n${agents
  .map(
    (id, i) =>
      `  - id: ${id}\n    runtime: claude\n    system_prompt: "${id}: {{ input }} / {{ context | length }}"\n` +
      (id === 'review' ? '    gate: {type: llm}\n' : '') +
      (i < agents.length - 1 ? `    handoffs: [{ to: ${agents[i + 1]}, condition: on_pass }]\n` : ''),
  )
  .join('')}`;
const script = `agents:\n${agents.map((id) => `  ${id}: ["${id} done"]`).join('\n')}\ngates:\n  review: [approved]\n`;

/** What a finished task is, without the parts that differ between two runs of it (times). */
const outcome = (json: TaskJson) => ({
  status: json.status,
  stages: json.stages.map((s) => ({
    n: s.n,
    agent: s.agent,
    status: s.status,
    output: s.output,
    gate: s.gate,
    usage: s.usage,
  })),
  usage: json.usage,
});

describe('troupe restart', () => {
  it.each(agents.map((_, i) => i + 1))(
    'restarting a 6-stage task from stage %i gives the same final state',
    async (n) => {
      const dir = project({ 'p.yaml': pipelineYaml, 's.yaml': script });
      const first = await troupeJson(dir, ['run', 'go', '--file', 'p.yaml', '--script', 's.yaml']);
      expect(first.json.stages).toHaveLength(6);
      const context = (await troupe(dir, ['context', first.json.id])).stdout;
      const again = await troupeJson(dir, ['restart', first.json.id, '--from-stage', String(n)]);
      expect(again.code).toBe(0);
      expect(outcome(again.json)).toEqual(outcome(first.json));
      expect(
        (await troupe(dir, ['context', first.json.id])).stdout.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z?/g, 'T'),
      ).toBe(context.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z?/g, 'T'));
      // the set-aside events are kept for audit
      const db = new Database(join(dir, '.troupe', 'troupe.db'), { readonly: true });
      const setAside = db
        .prepare('SELECT count(*) AS n FROM events WHERE superseded_by IS NOT NULL')
        .get() as { n: number };
      db.close();
      expect(setAside.n).toBeGreaterThan(0);
    },
  );

  it('defaults to the failed stage: after the cause is fixed, the task completes', async () => {
    const dir = project({
      'p.yaml': `agents:
  - id: a
    runtime: claude
    handoffs: [{to: b}]
  - id: b
    runtime: claude
    gate: {type: command, command: "test -f ready.txt", max_retries: 1}
`,
      's.yaml': 'agents:\n  a: ["a ok"]\n  b: ["b ok"]\n',
    });
    const failed = await troupeJson(dir, ['run', 'go', '--file', 'p.yaml', '--script', 's.yaml']);
    expect(failed.json.status).toBe('failed');
    writeFileSync(join(dir, 'ready.txt'), '');
    const restarted = await troupeJson(dir, ['restart', failed.json.id]);
    expect(restarted.json.status).toBe('completed');
    expect(restarted.json.stages.map((s) => [s.output, s.gate?.decision ?? null])).toEqual([
      ['a ok', null],
      ['b ok', 'rejected'],
      ['b ok', 'approved'],
    ]);
  });

  it('refuses a stage outside the task, and leaves the task as it was', async () => {
    const dir = project({ 'p.yaml': pipelineYaml, 's.yaml': script });
    const first = await troupeJson(dir, ['run', 'go', '--file', 'p.yaml', '--script', 's.yaml']);
    const bad = await troupe(dir, ['restart', first.json.id, '--from-stage', '7']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/outside .* stages \(1-6\)/);
    expect((await troupe(dir, ['restart', first.json.id, '--from-stage', 'x'])).code).toBe(2);
    expect((await troupeJson(dir, ['status', first.json.id])).json).toEqual(first.json);
  });
});

describe('troupe fix', () => {
  it('starts a linked follow-up that carries the first task’s context', async () => {
    const dir = project({
      'p.yaml': 'agents:\n  - id: dev\n    runtime: claude\n    system_prompt: "{{ input }}"\n',
      's.yaml':
        'agents:\n  dev:\n    - {when: "also handle HEAD", reply: "HEAD handled"}\n    - "GET handled"\n',
    });
    const first = await troupeJson(dir, ['run', 'add /health', '--file', 'p.yaml', '--script', 's.yaml']);
    const fix = await troupeJson<TaskJson & { parent: string }>(dir, [
      'fix',
      first.json.id,
      'also handle HEAD',
    ]);
    expect(fix.code).toBe(0);
    expect(fix.json.parent).toBe(first.json.id);
    // titled by the request, which lists show
    expect(fix.json.input.split('\n')[0]).toBe('also handle HEAD');
    expect(fix.json.input).toContain(`--- Follow-up of ${first.json.id}: add /health ---`);
    const listed = await troupe(dir, ['list']);
    expect(listed.stdout.split('\n')[0]).toMatch(/ {2}also handle HEAD$/);
    expect(fix.json.input).toContain('GET handled');
    expect(fix.json.stages[0]!.output).toBe('HEAD handled');
  });
});
