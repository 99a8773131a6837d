import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectText, launchBrowser, noBrowser } from './support/browser.js';
import { serve } from './support/serve.js';
import { project, spawnTroupe, troupe, troupeJson, waitFor } from './support/troupe.js';

/** Whether a process of this pid runs (a zombie is reaped by init soon after). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const gated = {
  'p.yaml': `agents:
  - id: writer
    runtime: claude
    system_prompt: "{{ input }}"
    gate: {type: human}
`,
  's.yaml': 'agents:\n  writer: ["draft 1"]\n',
};

type StatusJson = {
  id: string;
  status: string;
  waiting: unknown;
  stages: Array<{ status: string; duration_ms: number }>;
};

describe('cancel tells the truth', () => {
  it('a task cancelled at a human gate waits for nothing, and approve after it says why in one line', async () => {
    const dir = project(gated);
    const first = await troupeJson(dir, ['run', 'write', '--file', 'p.yaml', '--script', 's.yaml']);
    expect([first.code, first.json.status]).toEqual([6, 'awaiting_gate']);
    const id = first.json.id;
    expect((await troupe(dir, ['cancel', id, '-r', 'changed my mind'])).code).toBe(0);

    const status = await troupeJson<StatusJson>(dir, ['status', id]);
    expect(status.json.status).toBe('cancelled');
    expect(status.json.waiting).toBeNull();
    expect(status.json.stages.map((s) => s.status)).toEqual(['completed']);
    expect((await troupe(dir, ['list', '--waiting'])).stdout).not.toContain(id);

    for (const [command, what] of [
      [['approve', id], 'approve'],
      [['reject', id, '-r', 'no'], 'reject'],
      [['human-input', id, 'yes'], 'answer'],
    ] as const) {
      const refused = await troupe(dir, [...command]);
      expect(refused.code).toBe(1);
      expect(refused.stderr.trim()).toMatch(
        new RegExp(`^troupe: ${id} was cancelled at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z; nothing to ${what}$`),
      );
    }
  }, 60_000);

  it('the API answers an approve after cancel with 409 and the same message; the Tasks page lists it under Cancelled', async () => {
    const dir = project(gated);
    const first = await troupeJson(dir, ['run', 'write', '--file', 'p.yaml', '--script', 's.yaml']);
    const id = first.json.id;
    const server = await serve(dir);
    try {
      const cancel = await fetch(new URL(`/api/tasks/${id}/cancel`, server.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(cancel.status).toBe(200);
      const approve = await fetch(new URL(`/api/tasks/${id}/approve`, server.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(approve.status).toBe(409);
      const body = (await approve.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('invalid_state');
      expect(body.error.message).toMatch(new RegExp(`^${id} was cancelled at .+; nothing to approve$`));

      const detail = (await (await fetch(new URL(`/api/tasks/${id}`, server.url))).json()) as StatusJson;
      expect([detail.status, detail.waiting]).toEqual(['cancelled', null]);
      const page = (await (await fetch(new URL('/api/tasks?status=cancelled', server.url))).json()) as {
        tasks: Array<{ id: string; waiting: unknown }>;
      };
      expect(page.tasks).toEqual([expect.objectContaining({ id, waiting: null })]);
      if (!noBrowser) {
        const browser = await launchBrowser();
        try {
          const tab = await browser.newPage();
          await tab.goto(server.url);
          await tab.getByRole('button', { name: 'Cancelled', exact: true }).click();
          await expectText(tab.getByTestId(`task-row-${id}`), 'cancelled');
          await tab.getByTestId(`task-row-${id}`).click();
          await expectText(tab.getByTestId('stage-1'), 'completed');
          expect(await tab.getByTestId('gate-actions').count()).toBe(0);
        } finally {
          await browser.close();
        }
      }
    } finally {
      await server.stop();
    }
  }, 60_000);

  it('cancelling a running command stage ends its process and the stage, at the cancel', async () => {
    const dir = project();
    const pidFile = join(dir, 'stage.pid');
    const script = `echo $$ > ${JSON.stringify(pidFile)}; exec sleep 30`;
    const files = project({
      'p.yaml': `agents:\n  - id: slow\n    runtime: command\n    command: [sh, -c, ${JSON.stringify(script)}]\n`,
    });
    const child = spawnTroupe(dir, ['run', 'go', '--file', join(files, 'p.yaml')]);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const id = await waitFor(() => /troupe (T-[0-9A-F]{6})/.exec(stderr)?.[1]);
    const pid = await waitFor(() =>
      existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim()
        ? Number(readFileSync(pidFile, 'utf8'))
        : undefined,
    );
    expect(alive(pid)).toBe(true);

    expect((await troupe(dir, ['cancel', id, '-r', 'enough'])).code).toBe(0);
    expect((await child).exitCode).toBe(1);
    await waitFor(() => (alive(pid) ? undefined : true), 5000);

    const status = await troupeJson<StatusJson>(dir, ['status', id]);
    expect(status.json.status).toBe('cancelled');
    expect(status.json.waiting).toBeNull();
    expect(status.json.stages.map((s) => s.status)).toEqual(['cancelled']);
    expect(status.json.stages[0]!.duration_ms).toBeGreaterThan(0);
    const text = await troupe(dir, ['status', id]);
    expect(text.stdout).toMatch(/\[1\] slow\s+cancelled/);
  }, 60_000);
});
