import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { launchBrowser, noBrowser } from './support/browser.js';
import { serve } from './support/serve.js';
import { project, repoRoot, troupe } from './support/troupe.js';

/**
 * The README's picture of the dashboard is this test's screenshot: the demo's task page, in
 * Debian's Chromium. `TROUPE_SCREENSHOT=1 npx vitest run test/dashboard-screenshot.test.ts` (after
 * `npm run build`) writes it to docs/dashboard.png; otherwise it goes to a temp folder.
 */
describe.skipIf(noBrowser)('the dashboard, as the README shows it', () => {
  it("shows the demo's task: its status, its pipeline graph and its timeline", async () => {
    const dir = project();
    const demo = await troupe(dir, ['demo']);
    expect(demo.code, demo.stderr).toBe(0);
    const listed = JSON.parse((await troupe(dir, ['list', '--json'])).stdout) as Array<{ id: string }>;
    const id = listed[0]!.id;
    const [server, browser] = await Promise.all([serve(dir), launchBrowser()]);
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await page.goto(new URL(`/tasks/${id}`, server.url).href);
      await page.getByTestId('detail-status').filter({ hasText: 'completed' }).waitFor({ timeout: 10_000 });
      await page.getByTestId('timeline').waitFor({ timeout: 10_000 });
      const png = await page.screenshot();
      // a PNG of the viewport's size
      expect(png.subarray(1, 4).toString()).toBe('PNG');
      expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1280, 800]);
      const out = process.env.TROUPE_SCREENSHOT
        ? join(repoRoot, 'docs', 'dashboard.png')
        : join(mkdtempSync(join(tmpdir(), 'troupe-shot-')), 'dashboard.png');
      writeFileSync(out, png);
      expect(readFileSync(out).equals(png)).toBe(true);
    } finally {
      await browser.close();
      await server.stop();
    }
  });
});
