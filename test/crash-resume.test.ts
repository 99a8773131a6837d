import { describe, expect, it } from 'vitest';
import { eventLog, project, spawnTroupe, troupe, troupeJson, waitFor } from './support/troupe.js';

const agents = ['a', 'b', 'c', 'd', 'e', 'f'];
const pipelineYaml = `agents:\n${agents
  .map(
    (id, i) =>
      `  - id: ${id}\n    runtime: claude\n    system_prompt: "${id}: {{ input }}"\n${i < agents.length - 1 ? `    handoffs: [{ to: ${agents[i + 1]} }]\n` : ''}${id === 'c' ? '    gate: {type: llm}\n' : ''}`,
  )
  .join('')}`;
const script = `agents:\n${agents.map((id) => `  ${id}: [{reply: "${id}-first", delay_ms: 60}, "${id}-again"]`).join('\n')}\ngates:\n  c: [approved]\n`;

/** Starts a run, kills it with SIGKILL after `afterMs`, and returns the task id. */
async function killedRun(dir: string, afterMs: number): Promise<string> {
  const child = spawnTroupe(dir, ['run', 'go', '--file', 'p.yaml', '--script', 's.yaml']);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const id = await waitFor(() => /troupe (T-[0-9A-F]{6})/.exec(stderr)?.[1]);
  await new Promise((r) => setTimeout(r, afterMs));
  child.kill('SIGKILL');
  await child;
  return id;
}

describe('kill -9 at any moment, then resume', () => {
  it.each([0, 20, 70, 130, 190, 260, 330, 420])(
    'killed after %i ms: resume finishes, nothing completed runs again',
    async (ms) => {
      const dir = project({ 'p.yaml': pipelineYaml, 's.yaml': script });
      const id = await killedRun(dir, ms);
      const resumed = await troupeJson(dir, ['resume', id]);
      if (resumed.json.status !== 'completed') throw new Error(JSON.stringify(resumed.json, null, 2));
      expect(resumed.code).toBe(0);
      // every agent ran to completion exactly once, with its first scripted reply
      expect(resumed.json.stages.map((s) => [s.agent, s.output])).toEqual(
        agents.map((a) => [a, `${a}-first`]),
      );
      const log = eventLog(dir, id);
      const completions = log.filter((e) => e.type === 'stage_completed').map((e) => e.data.stage);
      expect(completions).toEqual([1, 2, 3, 4, 5, 6]);
      expect(log.filter((e) => e.type === 'gate_decided')).toHaveLength(1);
      expect(log.filter((e) => e.type === 'task_completed')).toHaveLength(1);
      const context = (await troupe(dir, ['context', id])).stdout;
      expect(context.match(/^## \[stage \d+\]/gm)).toHaveLength(6);
    },
  );

  it('resuming a finished task changes nothing', async () => {
    const dir = project({ 'p.yaml': pipelineYaml, 's.yaml': script });
    const run = await troupeJson(dir, ['run', 'go', '--file', 'p.yaml', '--script', 's.yaml']);
    const before = eventLog(dir, run.json.id).length;
    const again = await troupeJson(dir, ['resume', run.json.id]);
    expect(again.json).toEqual(run.json);
    expect(eventLog(dir, run.json.id)).toHaveLength(before);
  });
});

describe('cancel from another process', () => {
  it('stops a running task at once, not when its stage ends', async () => {
    const dir = project({
      'p.yaml': 'agents:\n  - id: slow\n    runtime: claude\n',
      // a reply longer than the test may last: only the cancel can end this run in time
      's.yaml': 'agents:\n  slow: [{reply: "done", delay_ms: 600000}]\n',
    });
    const child = spawnTroupe(dir, ['run', 'go', '--file', 'p.yaml', '--script', 's.yaml']);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const id = await waitFor(() =>
      /▶ \[1\] slow/.test(stderr) ? /troupe (T-[0-9A-F]{6})/.exec(stderr)?.[1] : undefined,
    );
    expect((await troupe(dir, ['cancel', id, '-r', 'changed my mind'])).code).toBe(0);
    const result = await child;
    expect(result.exitCode).toBe(1);
    const status = await troupeJson(dir, ['status', id]);
    expect(status.json.status).toBe('cancelled');
    expect((await troupe(dir, ['cancel', id])).code).toBe(1);
  });
});

describe('several processes on one store', () => {
  it('four `troupe run`s at once in one project all complete (writers wait for each other)', async () => {
    const dir = project({
      'p.yaml': pipelineYaml,
      's.yaml': script.replaceAll('delay_ms: 60', 'delay_ms: 5'),
    });
    const runs = await Promise.all(
      [1, 2, 3, 4].map(() =>
        spawnTroupe(dir, ['run', 'go', '--file', 'p.yaml', '--script', 's.yaml', '--json']),
      ),
    );
    const results = runs.map((r) => JSON.parse(String(r.stdout)) as { status: string; error: string | null });
    expect(results.map((r) => r.error)).toEqual([null, null, null, null]);
    expect(results.map((r) => r.status)).toEqual(['completed', 'completed', 'completed', 'completed']);
  });
});
