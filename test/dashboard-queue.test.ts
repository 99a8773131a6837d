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
