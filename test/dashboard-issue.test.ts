import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openProject } from '../src/app/project.js';
import type { TaskIssueRef } from '../src/core/tracker.js';
import { loadPipeline } from '../src/pipeline/load.js';
import { expectText, launchBrowser, noBrowser } from './support/browser.js';
import { tmpRepo } from './support/git-repo.js';
import { type Served, serve } from './support/serve.js';

/**
 * The dashboard shows the tracker issue a task works on (#34): in the task list and on the task's
 * page, its identifier a link to the issue when the tracker gave an http(s) address, and text
 * when it gave anything else (a `javascript:` address must never become a link).
 */

const GITHUB: TaskIssueRef = {
  source: 'github:acme/app',
  id: '12',
  identifier: '#12',
  url: 'https://tracker.invalid/acme/app/issues/12',
  state: 'open',
};
const HOSTILE: TaskIssueRef = {
  source: 'linear:eng',
  id: 'u-1',
  identifier: '<img src=x onerror=alert(1)>ENG-7',
  url: 'javascript:alert(document.cookie)',
  state: 'In Progress',
};

let dir: string;
let server: Served;
let browser: Browser;
let page: Page;
const ids: Record<'github' | 'hostile' | 'plain' | 'gated', string> = {
  github: '',
  hostile: '',
  plain: '',
  gated: '',
};

beforeAll(async () => {
  if (noBrowser) return;
  dir = await tmpRepo({
    'README.md': 'app\n',
    '.troupe/pipelines/p.yaml': 'agents:\n  - id: writer\n    runtime: scripted\n',
    '.troupe/pipelines/gated.yaml':
      'agents:\n  - id: writer\n    runtime: claude\n    gate: { type: human }\n',
  });
  // as `troupe watch` starts them: through the task service, each with its issue (left pending)
  const project = openProject(dir);
  const pipeline = loadPipeline(path.join(dir, '.troupe/pipelines/p.yaml'));
  const start = (input: string, issue?: TaskIssueRef) =>
    project.tasks.start({ pipeline, input, cwd: dir, ...(issue ? { issue } : {}) });
  ids.plain = start('no issue');
  ids.github = start('fix the login', GITHUB);
  ids.hostile = start('from linear', HOSTILE);
  // and one run to a gate that waits for a person
  ids.gated = project.tasks.start({
    pipeline: loadPipeline(path.join(dir, '.troupe/pipelines/gated.yaml')),
    input: 'gated work',
    cwd: dir,
    issue: { ...GITHUB, id: '13', identifier: '#13' },
    script: { agents: { writer: ['a draft'] }, gates: {}, human: {} },
  });
  expect((await project.tasks.continue(ids.gated)).status).toBe('awaiting_gate');
  project.store.close();
  [server, browser] = await Promise.all([serve(dir), launchBrowser()]);
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe.skipIf(noBrowser)("the dashboard shows a task's tracker issue", () => {
  it('in the task list: the identifier links to an http(s) issue, a javascript: address stays text', async () => {
    await page.goto(server.url);
    const row = (id: string) => page.getByTestId(`task-row-${id}`);
    await expectText(row(ids.github).getByTestId('issue'), '#12 open');

    const link = row(ids.github).getByTestId('issue-link');
    expect(await link.getAttribute('href')).toBe(GITHUB.url);
    expect(await link.getAttribute('rel')).toBe('noopener noreferrer');
    expect(await link.textContent()).toBe('#12');

    const hostile = row(ids.hostile).getByTestId('issue');
    expect(await hostile.textContent()).toBe(`${HOSTILE.identifier} In Progress`);
    expect(await hostile.locator('a').count()).toBe(0);
    expect(await hostile.locator('img').count()).toBe(0);

    expect(await row(ids.plain).getByTestId('issue').count()).toBe(0);
    // a click on the issue opens the issue (in a new tab), not the task
    const [tab] = await Promise.all([page.waitForEvent('popup'), link.click()]);
    await tab.close();
    expect(new URL(page.url()).pathname).toBe('/');
  });

  it('on a "waiting for you" card: the issue as text, the card the one link', async () => {
    await page.goto(server.url);
    const card = page.getByTestId(`waiting-${ids.gated}`);
    await expectText(card.getByTestId('issue'), '#13 open');
    expect(await card.getByTestId('issue-identifier').textContent()).toBe('#13');
    expect(await card.locator('a').count()).toBe(0);
  });

  it("on the task's page: the issue with its link and state", async () => {
    await page.goto(new URL(`/tasks/${ids.github}`, server.url).toString());
    await expectText(page.getByTestId('issue'), '#12 open');
    expect(await page.getByTestId('issue-link').getAttribute('href')).toBe(GITHUB.url);

    await page.goto(new URL(`/tasks/${ids.hostile}`, server.url).toString());
    await expectText(page.getByTestId('issue'), 'In Progress');
    expect(await page.getByTestId('issue').locator('a').count()).toBe(0);
    expect(await page.getByTestId('issue-identifier').textContent()).toBe(HOSTILE.identifier);

    await page.goto(new URL(`/tasks/${ids.plain}`, server.url).toString());
    await page.getByTestId('detail-status').waitFor();
    expect(await page.getByTestId('issue').count()).toBe(0);
  });
});
