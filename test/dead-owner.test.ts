import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { expectText, launchBrowser, noBrowser } from './support/browser.js';
import { type Served, serve } from './support/serve.js';
import { bin, eventLog, project, troupe, troupeJson, waitFor } from './support/troupe.js';

/**
 * Stage 1 sleeps the first time it runs (the run is killed during it) and is quick when run
 * again; stage 2 is quick. The sleeper's pid is kept so the test can end it whatever happens.
 */
function killable() {
  const dir = project();
  const first = `if [ -e started ]; then echo again; else touch started; echo $$ > sleeper.pid; exec sleep 30; fi`;
  const files = project({
    'p.yaml': `agents:
  - id: slow
    runtime: command
    command: [sh, -c, ${JSON.stringify(first)}]
    handoffs: [{ to: quick }]
  - id: quick
    runtime: command
    command: [echo, done]
`,
  });
  return { dir, pipeline: join(files, 'p.yaml') };
}

type OwnerJson = {
  id: string;
  status: string;
  hint: string | null;
  owner: { pid: number; host: string; alive: boolean } | null;
};

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const clean of cleanups.splice(0)) await clean();
});

/** `troupe run` in a process group of its own, killed with SIGKILL (the whole group) once stage 1 sleeps. */
async function runKilledInStageOne(dir: string, pipeline: string): Promise<{ id: string; pid: number }> {
  const child = execa('node', [bin, 'run', 'go', '--file', pipeline], {
    cwd: dir,
    reject: false,
    detached: true,
    env: { NO_COLOR: '1' },
    stdin: 'ignore',
  });
  cleanups.push(() => {
    const sleeper = join(dir, 'sleeper.pid');
    if (existsSync(sleeper)) {
      try {
        process.kill(Number(readFileSync(sleeper, 'utf8')), 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const id = await waitFor(() => /troupe (T-[0-9A-F]{6})/.exec(stderr)?.[1]);
  await waitFor(() => (existsSync(join(dir, 'sleeper.pid')) ? true : undefined));
  process.kill(-child.pid!, 'SIGKILL');
  await child; // reaped: its pid no longer answers
  return { id, pid: child.pid! };
}

describe('an owner that is gone', () => {
  it('is shown by status, list, the API and the task page, whose Resume button carries the task on', async () => {
    const { dir, pipeline } = killable();
    const { id, pid } = await runKilledInStageOne(dir, pipeline);
    const gone = `process ${pid} on host ${hostname()} is gone — troupe resume ${id}`;

    const status = await troupeJson<OwnerJson>(dir, ['status', id]);
    expect(status.json).toMatchObject({
      status: 'running',
      owner: { pid, host: hostname(), alive: false },
      hint: gone,
    });
    expect((await troupe(dir, ['status', id])).stdout).toContain(`  ${gone}`);
    expect((await troupe(dir, ['list'])).stdout).toContain(gone);

    const server: Served = await serve(dir, ['--no-adopt'], { TROUPE_LEASE_SECONDS: '1' });
    cleanups.push(() => server.stop());
    const api = (path: string) => new URL(path, server.url);
    // two lease periods: a server told not to adopt leaves the task alone
    await new Promise((r) => setTimeout(r, 2500));
    const detail = (await (await fetch(api(`/api/tasks/${id}`))).json()) as OwnerJson;
    expect(detail).toMatchObject({ status: 'running', owner: { pid, alive: false }, hint: gone });
    const rows = (await (await fetch(api('/api/tasks'))).json()) as { tasks: OwnerJson[] };
    expect(rows.tasks).toEqual([
      expect.objectContaining({ id, owner: { pid, host: hostname(), alive: false } }),
    ]);

    if (noBrowser) {
      expect((await fetch(api(`/api/tasks/${id}/resume`), { method: 'POST' })).status).toBe(202);
    } else {
      // the task page says so, and its Resume button carries the task on
      const browser = await launchBrowser();
      cleanups.push(() => browser.close());
      const page = await browser.newPage();
      await page.goto(api(`/tasks/${id}`).toString());
      await expectText(page.getByTestId('owner-gone'), `Process ${pid} on host ${hostname()} is gone`);
      await page.getByTestId('resume').click();
      await expectText(page.getByTestId('detail-status'), 'completed');
    }
    await waitFor(async () => {
      const task = (await (await fetch(api(`/api/tasks/${id}`))).json()) as OwnerJson;
      return task.status === 'completed' ? task : undefined;
    }, 20_000);
    const done = await troupeJson<OwnerJson>(dir, ['status', id]);
    expect([done.json.owner, done.json.hint]).toEqual([null, null]);
    expect((await fetch(api(`/api/tasks/${id}/resume`), { method: 'POST' })).status).toBe(409);
  }, 60_000);

  it('is adopted by a running `troupe serve`, which completes the task', async () => {
    const { dir, pipeline } = killable();
    const server = await serve(dir, [], { TROUPE_LEASE_SECONDS: '1' });
    cleanups.push(() => server.stop());
    const { id } = await runKilledInStageOne(dir, pipeline);
    const done = await waitFor(async () => {
      const status = await troupeJson<OwnerJson & { stages: Array<{ output: string }> }>(dir, ['status', id]);
      return status.json.status === 'completed' ? status.json : undefined;
    }, 20_000);
    expect(done.stages.map((s) => s.output.trim())).toEqual(['again', 'done']);
    const resumes = eventLog(dir, id).filter((e) => e.type === 'task_resumed');
    expect(resumes.map((e) => e.data.pid)).toEqual([server.process.pid]);
  }, 60_000);
});
