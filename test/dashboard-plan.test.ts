import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { expectText, launchBrowser, noBrowser } from './support/browser.js';
import { tmpRepo } from './support/git-repo.js';
import { type Served, serve } from './support/serve.js';
import { repoRoot } from './support/troupe.js';

/**
 * The task page draws a plan's graph live (#31): the plan-build template run offline through a
 * real server, in Debian's Chromium, its six pieces in three levels drawn as they run and merge.
 */

const template = (file: string) => readFileSync(path.join(repoRoot, 'templates', 'plan-build', file), 'utf8');

/**
 * The template's script, each piece's builder taking a second: a piece is running long enough for
 * the page to draw it so, however fast or loaded the machine.
 */
function slowBuilders(): string {
  const script = parse(template('script.yaml')) as { agents: { builder: object[] } };
  script.agents.builder = script.agents.builder.map((entry) => ({ ...entry, delay_ms: 1000 }));
  return stringify(script);
}
const shots = mkdtempSync(path.join(tmpdir(), 'troupe-dashboard-plan-'));

/** The plan's edges: each piece from the pieces it depends on. */
const EDGES = ['model-api', 'model-store', 'config-store', 'api-ui', 'api-docs', 'store-docs'];
const PIECES = ['model', 'config', 'api', 'store', 'ui', 'docs'];

let dir: string;
let server: Served;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  if (noBrowser) return;
  dir = await tmpRepo({
    'README.md': 'todos\n',
    '.troupe/pipelines/pb.yaml': template('agents.yaml'),
    'pb-script.yaml': slowBuilders(),
  });
  [server, browser] = await Promise.all([serve(dir), launchBrowser()]);
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe.skipIf(noBrowser)("the task page draws a plan's graph", () => {
  it('shows the six pieces and their edges as they run, each merged in the end', async () => {
    const started = await fetch(new URL('/api/run', server.url), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ input: 'build a todo app', pipeline: 'pb', script: 'pb-script.yaml' }),
    });
    const { task_id: id } = (await started.json()) as { task_id: string };
    await page.goto(new URL(`/tasks/${id}`, server.url).toString());

    // live: the graph appears once the plan expands, and a piece is drawn running before the end
    await page.getByTestId('plan-graph').waitFor({ timeout: 15_000 });
    await page.locator('[data-testid^="piece-"][data-status="running"]').first().waitFor({ timeout: 15_000 });
    await page.screenshot({ path: path.join(shots, 'plan-running.png'), fullPage: true });

    // six pieces, each in a worktree of its own and verified in a fresh checkout: longer than expectText waits
    await page.getByTestId('detail-status').filter({ hasText: 'completed' }).waitFor({ timeout: 60_000 });
    for (const piece of PIECES)
      await page.locator(`[data-testid="piece-${piece}"][data-status="merged"]`).waitFor({ timeout: 8000 });
    expect(await page.locator('g[data-testid^="piece-"]').count()).toBe(6);

    const drawn = await page
      .locator('[data-testid^="plan-edge-"]')
      .evaluateAll((edges) => edges.map((e) => e.getAttribute('data-testid')!.slice('plan-edge-'.length)));
    expect(drawn.sort()).toEqual([...EDGES].sort());
    // each edge runs from its dependency's right side to its dependent's left side (columns are
    // 64 px apart, so an edge between other pieces is far off; a few px are strokes and the arrow)
    for (const edge of EDGES) {
      const [from, to] = edge.split('-');
      const [a, b, line] = await Promise.all([
        page.getByTestId(`piece-${from}`).boundingBox(),
        page.getByTestId(`piece-${to}`).boundingBox(),
        page.getByTestId(`plan-edge-${edge}`).boundingBox(),
      ]);
      expect(Math.abs(line!.x - (a!.x + a!.width)), edge).toBeLessThan(8);
      expect(Math.abs(line!.x + line!.width - b!.x), edge).toBeLessThan(8);
    }

    // each node: its worker's stage and the verifier's verdict, what it used, its diff
    const api = page.getByTestId('piece-api');
    await expectText(api.getByTestId('piece-work'), '✓ tester');
    expect(await api.getByTestId('piece-work').textContent()).toMatch(/^builder #\d+ · ✓ tester$/);
    expect(await api.getByTestId('piece-used').textContent()).toMatch(/^\d+ tok$/);
    expect(await api.getByTestId('piece-diff').textContent()).toBe('1 file +2 −0');
    expect(await page.getByTestId('plan').textContent()).toContain('6 pieces: 6 merged');
    await page.screenshot({ path: path.join(shots, 'plan-merged.png'), fullPage: true });
  }, 120_000);
});
