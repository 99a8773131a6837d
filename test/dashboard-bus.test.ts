import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectText, launchBrowser, noBrowser } from './support/browser.js';
import { type Served, serve } from './support/serve.js';
import { project, troupe } from './support/troupe.js';

/**
 * The Team page against a real server and a real bus (`troupe bus setup`): agents act through
 * the CLI, the person through the page.
 */

let dir: string;
let server: Served;
let browser: Browser;
let page: Page;

/** A bus command in the session `collab`, as a launched agent runs it; its --json output. */
async function bus<T = Record<string, unknown>>(args: string[]): Promise<T> {
  const result = await troupe(dir, ['bus', ...args, '--root', '.agent-mail/collab', '--json']);
  if (result.code !== 0) throw new Error(`bus ${args.join(' ')}: exit ${result.code}\n${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

type Drained = { drained: { from: string; subject: string; thread: string; body: string }[] };

beforeAll(async () => {
  if (noBrowser) return;
  dir = project();
  const setup = await troupe(dir, ['bus', 'setup', '--agents', 'claude,codex', '--session', 'collab', '-y']);
  expect(setup.code, setup.stderr).toBe(0);
  [server, browser] = await Promise.all([serve(dir), launchBrowser()]);
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe.skipIf(noBrowser)('the Team page', () => {
  it("shows the roster's presence and an agent's mail as it comes; the person replies and writes", async () => {
    await bus(['presence', 'set', '--me', 'codex', '--status', 'idle', '--note', 'lunch']);
    await page.goto(server.url);
    await page.getByTestId('nav-team').click();
    await page.getByTestId('bus-session').selectOption('collab');
    await page.locator('[data-testid="roster-codex"][data-presence="idle"]').waitFor({ timeout: 8000 });
    await expectText(page.getByTestId('roster-codex'), 'lunch');
    expect(await page.getByTestId('roster-claude').getAttribute('data-presence')).toBe('offline');

    // mail sent while the page is open appears without a reload
    const asked = await bus<{ id: string; thread: string }>([
      'send',
      '--me',
      'claude',
      '--to',
      'user',
      '--subject',
      'Which API style?',
      '--kind',
      'question',
      '--body',
      'REST or RPC for the billing service?',
    ]);
    const row = page.getByTestId(`inbox-${asked.id}`);
    await row.waitFor({ timeout: 8000 });
    expect(await row.getAttribute('data-read')).toBe('false');
    await page.locator('[data-testid="roster-claude"][data-presence="active"]').waitFor({ timeout: 8000 });

    await row.click();
    await expectText(page.getByTestId('message-body'), 'REST or RPC for the billing service?');
    await page.locator(`[data-testid="inbox-${asked.id}"][data-read="true"]`).waitFor({ timeout: 8000 });
    await page.getByTestId('reply-body').fill('REST, with an OpenAPI document.');
    await page.getByTestId('reply-submit').click();
    await expectText(page.getByTestId('message'), `replied to claude on ${asked.thread}`);

    const claude = await bus<Drained>(['drain', '--me', 'claude', '--include-body']);
    expect(claude.drained).toEqual([
      expect.objectContaining({
        from: 'user',
        subject: 'Re: Which API style?',
        thread: asked.thread,
        body: 'REST, with an OpenAPI document.\n',
      }),
    ]);

    await page.getByTestId('compose-to').fill('codex');
    await page.getByTestId('compose-subject').fill('After lunch');
    await page.getByTestId('compose-body').fill('Please review the billing API.');
    await page.getByTestId('compose-priority').selectOption('urgent');
    await page.getByTestId('compose-submit').click();
    await expectText(page.getByTestId('compose-note'), 'sent to codex');
    const codex = await bus<Drained & { drained: { priority: string }[] }>([
      'drain',
      '--me',
      'codex',
      '--include-body',
    ]);
    expect(codex.drained).toEqual([
      expect.objectContaining({ from: 'user', subject: 'After lunch', priority: 'urgent' }),
    ]);
  });
});
