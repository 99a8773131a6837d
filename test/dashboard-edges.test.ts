import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectText, launchBrowser, noBrowser } from './support/browser.js';
import { type Served, serve } from './support/serve.js';
import { example, project, troupe } from './support/troupe.js';

/**
 * The dashboard's rough edges a newcomer found (docs: ../shared/reviews/2026-12-03-newcomer.md),
 * each against a real server in Debian's Chromium.
 */

let dir: string;
let server: Served;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  if (noBrowser) return;
  dir = project({
    // alphabetically first, and not the default
    '.troupe/pipelines/alpha.yaml': 'agents:\n  - id: first\n    runtime: claude\n',
    '.troupe/pipelines/deploy.yaml': readFileSync(example('human-deploy'), 'utf8'),
    '.troupe/config.yaml': 'default_pipeline: deploy\n',
    'no-human.yaml': 'agents:\n  developer: ["Refactored auth."]\n  deployer: ["Ready to deploy 2.0.0."]\n',
  });
  [server, browser] = await Promise.all([serve(dir), launchBrowser()]);
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

async function waitForStatus(id: string, status: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const task = (await (await fetch(new URL(`/api/tasks/${id}`, server.url))).json()) as { status: string };
    if (task.status === status) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`task ${id} never reached ${status}`);
}

/** The person's inbox as the API lists it: each message's subject and whether it is read. */
async function inbox(): Promise<Array<{ id: string; subject: string; kind: string; read: boolean }>> {
  const listed = await fetch(new URL('/api/bus/mailboxes/user/inbox', server.url));
  return (
    (await listed.json()) as { messages: Array<{ id: string; subject: string; kind: string; read: boolean }> }
  ).messages;
}

describe.skipIf(noBrowser)("the dashboard's rough edges", () => {
  it('/pipelines opens the default pipeline, not the alphabetically first', async () => {
    await page.goto(new URL('/pipelines', server.url).href);
    await page.waitForURL(/\/pipelines\/deploy$/);
    await page.getByTestId('pipeline-graph').waitFor();
  });

  it('Revert puts back the saved text and its diagnostics', async () => {
    await page.goto(new URL('/pipelines/deploy', server.url).href);
    const editor = page.getByTestId('yaml-editor');
    await page.getByTestId('pipeline-graph').waitFor();
    const saved = await page.getByTestId('validation-summary').textContent();
    const text = await editor.inputValue();
    await editor.fill(text.replace('to: deployer', 'to: deploer'));
    await page.getByTestId('gutter-error-11').waitFor({ timeout: 5000 });
    await expectText(page.getByTestId('diagnostics'), 'deploer');

    await page.getByTestId('revert-pipeline').click();
    expect(await editor.inputValue()).toBe(text);
    await page.getByTestId('gutter-error-11').waitFor({ state: 'detached', timeout: 5000 });
    expect(await page.getByTestId('validation-summary').textContent()).toBe(saved);
    expect((await page.getByTestId('diagnostics').allTextContents()).join('')).not.toContain('deploer');
    await page.getByTestId('pipeline-graph').waitFor();
  });

  it('the page of a task that does not exist links back to the task list', async () => {
    await page.goto(new URL('/tasks/T-NOPE', server.url).href);
    await expectText(page.getByTestId('task-error'), 'no task T-NOPE');
    await page.getByTestId('back-to-tasks').click();
    await page.waitForURL(new URL('/', server.url).href);
    await page.getByTestId('run-input').waitFor();
  });

  it("the inbox shows whole subjects, and a person's asks are read once answered or decided, from any channel", async () => {
    const started = await fetch(new URL('/api/run', server.url), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ input: 'Refactor auth', pipeline: 'deploy', script: 'no-human.yaml' }),
    });
    const { task_id: id } = (await started.json()) as { task_id: string };
    await waitForStatus(id, 'awaiting_human_input');
    await page.goto(server.url);
    await page.getByTestId('nav-team').click();
    const question = (await inbox()).find((m) => m.kind === 'question')!;
    const questionRow = page.getByTestId(`inbox-${question.id}`);
    expect(await questionRow.getAttribute('data-read')).toBe('false');

    // answered at the terminal: the question is read, and the gate's request comes unread
    const answered = await troupe(dir, ['human-input', id, 'Keep the public API']);
    expect(answered.code, answered.stderr).toBe(6); // the task waits for the person again
    await page.locator(`[data-testid="inbox-${question.id}"][data-read="true"]`).waitFor({ timeout: 8000 });
    const request = (await inbox()).find((m) => m.kind === 'review_request')!;
    expect(request.subject).toBe(`approve deployer's output? (${id}, stage 2)`);
    const requestRow = page.getByTestId(`inbox-${request.id}`);
    await requestRow.waitFor({ timeout: 8000 });
    expect(await requestRow.getAttribute('data-read')).toBe('false');

    // the whole subject is on the page, nothing of it cut off
    const subject = requestRow.locator('.inbox-subject');
    expect(await subject.textContent()).toBe(request.subject);
    const clipped = await subject.evaluate((el) => el.scrollWidth > el.clientWidth);
    expect(clipped).toBe(false);
    expect(await subject.getAttribute('title')).toBe(request.subject);

    // approved through the API (the dashboard's channel): the request is read too
    const approved = await fetch(new URL(`/api/tasks/${id}/approve`, server.url), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ reason: 'LGTM' }),
    });
    expect(approved.status).toBe(202);
    await page.locator(`[data-testid="inbox-${request.id}"][data-read="true"]`).waitFor({ timeout: 8000 });
    expect((await inbox()).filter((m) => !m.read)).toEqual([]);
    await waitForStatus(id, 'completed');
  });
});
