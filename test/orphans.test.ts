import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { taggedPids } from './support/processes.js';
import { bin, eventLog, project, troupeJson, waitFor } from './support/troupe.js';

/**
 * The red team's kill -9 harness (docs/reliability.md): a chain of command stages, each of
 * which also starts a child that leaves troupe's process groups with setsid; troupe is killed
 * with SIGKILL (its pid, or its whole group) at a moment in the chain, then resumed. Nothing of
 * the killed run may go on after the kill: no stage runs twice at once, no completed stage runs
 * again, no event is lost.
 */

const stages = ['s1', 's2', 's3', 's4'];
// each line: agent, what, pid, time in ms; the setsid child writes `late` if it lives on
const stageCommand = (next: string | null) => `    runtime: command
    command: [bash, -c, 'log() { echo "$TROUPE_AGENT $1 $$ $(date +%s%3N)" >> effects.log; }; log start; (setsid bash -c "sleep 1; log() { echo \\"$TROUPE_AGENT late \\$\\$ \\$(date +%s%3N)\\" >> effects.log; }; log" &); sleep 0.6; log end']
${next ? `    handoffs: [{ to: ${next} }]\n` : ''}`;
const pipeline = `agents:\n${stages.map((id, i) => `  - id: ${id}\n${stageCommand(stages[i + 1] ?? null)}`).join('')}`;

interface Effect {
  agent: string;
  what: 'start' | 'end' | 'late';
  pid: number;
  at: number;
}

function effects(dir: string): Effect[] {
  return readFileSync(join(dir, 'effects.log'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const [agent, what, pid, at] = line.split(' ');
      return { agent: agent!, what: what as Effect['what'], pid: Number(pid), at: Number(at) };
    });
}

/** `troupe run` in a process group of its own (so the group can be killed), and its task id. */
async function startRun(dir: string) {
  const run = execa('node', [bin, 'run', 'go', '--no-interactive'], {
    cwd: dir,
    reject: false,
    env: { NO_COLOR: '1' },
    stdin: 'ignore',
    detached: true,
  });
  let stderr = '';
  run.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const id = await waitFor(() => /troupe (T-[0-9A-F]{6})/.exec(stderr)?.[1]);
  return { run, id, stderr: () => stderr };
}

async function killTrial(group: boolean, afterMs: number) {
  const dir = project({ '.troupe/agents.yaml': pipeline });
  const { run, id, stderr } = await startRun(dir);
  await waitFor(() => (stderr().includes('▶ [1]') ? true : undefined));
  await new Promise((r) => setTimeout(r, afterMs));
  process.kill(group ? -run.pid! : run.pid!, 'SIGKILL');
  const killedAt = Date.now();
  await run;
  // the killed run's agents, and all they started, end without troupe's help
  await waitFor(() => (taggedPids(`${id}/`).length === 0 ? true : undefined), 15_000);
  const completedBefore = new Set(
    eventLog(dir, id)
      .filter((e) => e.type === 'stage_completed')
      .map((e) => e.data.stage as number),
  );
  const resumed = await troupeJson(dir, ['resume', id, '--no-interactive']);
  return { dir, id, killedAt, completedBefore, resumed };
}

describe('kill -9 of troupe run, then resume', () => {
  const trials = [
    { group: false, afterMs: 100 },
    { group: true, afterMs: 300 },
    { group: false, afterMs: 900 },
    { group: true, afterMs: 1300 },
    { group: false, afterMs: 2200 },
    { group: true, afterMs: 2600 },
  ];
  it.each(trials)('kill -9 of the %s', async ({ group, afterMs }) => {
    const { dir, id, killedAt, completedBefore, resumed } = await killTrial(group, afterMs);
    expect(resumed.json.status).toBe('completed');
    const log = eventLog(dir, id);
    // no event lost or doubled: each stage completed exactly once, in order
    expect(log.filter((e) => e.type === 'stage_completed').map((e) => e.data.stage)).toEqual([1, 2, 3, 4]);
    const all = effects(dir);
    // a process of the killed run wrote nothing after the kill: it did not run on beside the resumed one
    const killedRun = new Set(all.filter((e) => e.at < killedAt).map((e) => e.pid));
    const afterKill = all.filter((e) => killedRun.has(e.pid) && e.at > killedAt + 50);
    expect(afterKill).toEqual([]);
    expect(all.filter((e) => e.what === 'late' && e.at > killedAt + 50)).toEqual(
      all.filter((e) => e.what === 'late' && e.at > killedAt + 50 && !killedRun.has(e.pid)),
    );
    // a stage completed before the kill never started again
    const restarted = all.filter((e) => e.what === 'start' && e.at > killedAt).map((e) => e.agent);
    for (const stage of completedBefore) expect(restarted).not.toContain(stages[stage - 1]);
    // every stage ended exactly once as far as the resumed task knows; no run of one overlapped another
    for (const agent of stages) {
      const runs = all.filter((e) => e.agent === agent && e.what !== 'late');
      for (let i = 1; i < runs.length; i++) {
        if (runs[i]!.what === 'start') expect(runs[i - 1]!.at <= runs[i]!.at).toBe(true);
      }
    }
  });
});

describe('a task taken over on the same machine', () => {
  it('ends what its dead owner left running, supervisors included, before the stage runs again', async () => {
    // the first run sleeps long; the resumed one (once `resumed` exists) is quick
    const dir = project({
      '.troupe/agents.yaml': `agents:
  - id: long
    runtime: command
    command: [bash, -c, 'echo "start $$ $(date +%s%3N)" >> effects.log; if [ -e resumed ]; then sleep 0.1; else sleep 60; fi; echo "end $$ $(date +%s%3N)" >> effects.log']
`,
    });
    const { run, id } = await startRun(dir);
    await waitFor(() => {
      try {
        return readFileSync(join(dir, 'effects.log'), 'utf8').includes('start') ? true : undefined;
      } catch {
        return undefined;
      }
    });
    // the worst case: troupe and the agent's supervisor die together, the agent lives on
    const tagged = taggedPids(`${id}/`);
    const supervisors = tagged.filter((pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'node');
    const orphans = tagged.filter((pid) => !supervisors.includes(pid));
    expect(supervisors).toHaveLength(1);
    expect(orphans.length).toBeGreaterThan(0);
    for (const pid of [run.pid!, ...supervisors]) process.kill(pid, 'SIGKILL');
    await run;
    expect(taggedPids(`${id}/`).sort()).toEqual(orphans.sort());
    writeFileSync(join(dir, 'resumed'), '');
    const resumed = await troupeJson(dir, ['resume', id, '--no-interactive']);
    expect(resumed.json.status).toBe('completed');
    expect(taggedPids(`${id}/`)).toEqual([]);
    const resumedEvent = eventLog(dir, id).find((e) => e.type === 'task_resumed');
    expect(((resumedEvent?.data.ended ?? []) as Array<{ pid: number }>).map((p) => p.pid).sort()).toEqual(
      orphans.sort(),
    );
    // the orphan never wrote its end: it was ended, not left to finish beside the new run
    const lines = readFileSync(join(dir, 'effects.log'), 'utf8').trim().split('\n');
    expect(lines.filter((l) => l.startsWith('end'))).toHaveLength(1);
  });
});
