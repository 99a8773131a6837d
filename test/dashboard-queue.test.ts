import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { VERSION } from '../src/cli/version.js';
import { expectText, launchBrowser, noBrowser } from './support/browser.js';
import { startWorker, testDatabase } from './support/queue-db.js';
import { serve } from './support/serve.js';
import { project, troupe, waitFor } from './support/troupe.js';

/** The Team page's queue: a line per lane and each worker's version and counts (stages, takeovers), with a real worker on PostgreSQL. */
describe.skipIf(noBrowser)('the Team page shows the work queue', () => {
  it('a lane per row (active jobs, paused) and the worker with its version and takeovers', async () => {
    await using db = await testDatabase();
    const env = { TROUPE_QUEUE: db.url };
    const dir = project({
      'slow.yaml': 'agents:\n  - id: slow\n    runtime: claude\n',
      's.yaml': 'agents:\n  slow: [{reply: "late", delay_ms: 600000}]\n',
    });
    const worker = await startWorker(dir, db.url, ['--runtimes', 'claude']);
    const run = await troupe(
      dir,
      ['run', 'go', '--file', 'slow.yaml', '--script', 's.yaml', '--detach'],
      env,
    );
    expect(run.code, run.stderr).toBe(0);
    const task = run.stdout.trim();
    // held by the worker (so the server leaves it alone), shown as its running task
    const id: string = await waitFor(async () => {
      const listed = JSON.parse((await troupe(dir, ['workers', '--json'], env)).stdout);
      return listed[0]?.tasks.includes(task) ? listed[0].id : undefined;
    }, 30_000);
    expect((await troupe(dir, ['queue', 'pause', 'codex'], env)).code).toBe(0);
    const [server, browser] = await Promise.all([serve(dir, [], env), launchBrowser()]);
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await page.goto(server.url);
      await page.getByTestId('nav-team').click();
      await expectText(page.getByTestId('lane-claude'), 'claude');
      const claude = page.getByTestId('lane-claude');
      expect((await claude.locator('td').allInnerTexts()).map((t) => t.trim())).toEqual([
        'claude',
        '0',
        '—',
        '1',
        '0',
        '0',
      ]);
      expect(await page.getByTestId('lane-codex').getAttribute('data-paused')).toBe('true');
      await expectText(page.getByTestId('workers'), VERSION);
      await expectText(page.getByTestId('workers'), task);
      // its counts: no stage ended yet, nothing taken over
      await expectText(page.getByTestId('workers').locator('thead'), 'Takeovers');
      const row = page.getByTestId(`worker-${id}`);
      expect((await row.getByTestId('takeovers').textContent())?.trim()).toBe('0');
    } finally {
      await browser.close();
      await server.stop();
    }
    await troupe(dir, ['worker', 'stop', id], env);
    expect((await worker.child).exitCode).toBe(0);
  }, 90_000);
});

describe.skipIf(noBrowser)('a detached task no live worker takes', () => {
  it('says why it waits (status, list, the page); a worker serves the runtimes installed; a gone worker runs nothing', async () => {
    await using db = await testDatabase();
    const env = { TROUPE_QUEUE: db.url };
    const dir = project({
      'slow.yaml': 'agents:\n  - id: slow\n    runtime: claude\n',
      's.yaml': 'agents:\n  slow: ["done"]\n',
    });
    // a worker that stopped answering while it ran a task (another has taken that task since)
    expect((await troupe(dir, ['workers', '--json'], env)).code).toBe(0);
    await db.query(
      `INSERT INTO troupe_workers (id, host, pid, runtimes, labels, tasks, started, last_seen)
       VALUES ('gone-1', 'h', 1, '{claude}', '{}', '{T-GONE01}', now() - interval '5 minutes', now() - interval '2 minutes')`,
    );
    const run = await troupe(
      dir,
      ['run', 'go', '--file', 'slow.yaml', '--script', 's.yaml', '--detach'],
      env,
    );
    expect(run.code, run.stderr).toBe(0);
    const task = run.stdout.trim();

    const status = await troupe(dir, ['status', task], env);
    expect(status.stdout).toContain('not taken: no worker is running: start one with `troupe worker`');
    expect((await troupe(dir, ['list'], env)).stdout).toContain('not taken: no worker is running');
    const json = JSON.parse((await troupe(dir, ['status', task, '--json'], env)).stdout);
    expect(json).toMatchObject({
      status: 'pending',
      no_worker: expect.stringContaining('no worker is running'),
    });

    // a live worker, on a machine with codex alone: it serves the runtimes installed, not claude
    const bins = mkdtempSync(join(tmpdir(), 'troupe-bins-'));
    const codex = join(bins, 'codex');
    writeFileSync(codex, '#!/bin/sh\n', { mode: 0o755 });
    const missing = join(bins, 'missing');
    const worker = await startWorker(dir, db.url, [], {
      TROUPE_CODEX_BIN: codex,
      TROUPE_CLAUDE_BIN: missing,
      TROUPE_GEMINI_BIN: missing,
    });
    expect(worker.stderr()).toContain('runtimes: codex, openai, command, scripted, mailbox;');
    const untaken = 'no live worker takes runtime claude (`troupe worker --runtimes claude`)';
    expect((await troupe(dir, ['status', task], env)).stdout).toContain(`not taken: ${untaken}`);

    const [server, browser] = await Promise.all([serve(dir, [], env), launchBrowser()]);
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await page.goto(server.url);
      await expectText(page.getByTestId(`task-row-${task}`).getByTestId('no-worker'), untaken);
      await page.getByTestId(`task-row-${task}`).click();
      await expectText(page.getByTestId('no-worker'), untaken);

      await page.getByTestId('nav-team').click();
      await expectText(page.getByTestId('workers'), 'codex, openai, command, scripted, mailbox');
      const gone = page.locator('[data-testid="worker-gone-1"][data-presence="offline"]');
      await gone.waitFor({ timeout: 8000 });
      expect(await gone.textContent()).not.toContain('T-GONE01');
    } finally {
      await browser.close();
      await server.stop();
    }
    expect(await worker.stop()).toBe(0);
  }, 90_000);
});
