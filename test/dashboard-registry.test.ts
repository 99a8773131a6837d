import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { expectText, launchBrowser, noBrowser } from './support/browser.js';
import { serve } from './support/serve.js';
import { project, troupe } from './support/troupe.js';

/**
 * The dashboard's Registry page in a real browser, as aqm's: the registry's pipelines with their
 * versions, a version picked in the dropdown and pulled into the project (then shown as installed).
 */
describe.skipIf(noBrowser)('the Registry page', () => {
  it('lists the registry and pulls the version picked in the dropdown', async () => {
    const home = mkdtempSync(join(tmpdir(), 'troupe-home-'));
    const registry = join(home, 'registry');
    const env = {
      HOME: home,
      XDG_CACHE_HOME: join(home, 'cache'),
      XDG_CONFIG_HOME: join(home, 'config'),
      TROUPE_DEFAULT_REGISTRY: registry,
    };
    expect((await troupe(tmpdir(), ['registry', 'init', registry], env)).code).toBe(0);
    const author = project({
      '.troupe/pipelines/review.yaml':
        'agents:\n  - id: reviewer\n    runtime: scripted\n    system_prompt: "Review: {{ input }}"\n',
    });
    for (const args of [
      ['--description', 'reviews a change', '--tags', 'quality'],
      ['--bump', 'minor'],
      ['--bump', 'minor'],
    ]) {
      const published = await troupe(author, ['publish', 'review', '--registry', registry, ...args], env);
      expect(published.code, published.stderr).toBe(0);
    }

    const dir = project();
    const [server, browser] = await Promise.all([serve(dir, [], env), launchBrowser()]);
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await page.goto(server.url);
      await page.getByTestId('nav-registry').click();
      const row = page.getByTestId('registry-review');
      await expectText(row, 'reviews a change');
      await expectText(page.getByTestId('registry-location'), '(default)');
      const dropdown = row.getByTestId('registry-version');
      expect(await dropdown.locator('option').allInnerTexts()).toEqual(['1.2.0 (latest)', '1.1.0', '1.0.0']);
      expect(await dropdown.inputValue()).toBe('1.2.0');
      await dropdown.selectOption('1.1.0');
      await row.getByTestId('registry-pull').click();
      await expectText(row.getByTestId('registry-note'), 'installed review@1.1.0');
      await expectText(row.locator('td').nth(2), '1.1.0');
      const lock = parse(readFileSync(join(dir, '.troupe', 'pipelines.lock'), 'utf8'));
      expect(lock.pipelines.review.version).toBe('1.1.0');
      expect(existsSync(join(dir, '.troupe', 'pipelines', 'review', 'agents.yaml'))).toBe(true);

      // search narrows the list; an unknown word empties it
      await page.getByTestId('registry-query').fill('no-such-thing');
      await page.getByTestId('registry-search').click();
      await expectText(page.getByTestId('registry'), 'Nothing matches "no-such-thing"');
    } finally {
      await browser.close();
      await server.stop();
    }
  }, 60_000);
});
