import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Served, serve } from './support/serve.js';
import { example, project } from './support/troupe.js';

/** The dashboard in Debian's Chromium (never a downloaded browser), against a real server. */

const CHROMIUM = '/usr/bin/chromium';
const shots = mkdtempSync(path.join(tmpdir(), 'troupe-dashboard-'));

const writerPipeline = `agents:
  - id: writer
    runtime: claude
    system_prompt: "Write: {{ input }}"
    handoffs: [{ to: editor }]
  - id: editor
    runtime: claude
    gate: { type: llm, prompt: "Is it good?" }
    system_prompt: "Edit: {{ input }}"
`;
const writeScript = `agents:
  writer:
    - reply: "A first draft of the release notes:\\n- faster start\\n- live dashboard\\n"
      delay_ms: 400
  editor:
    - reply: "Tightened the wording; ready to publish."
      delay_ms: 400
gates:
  editor: [{ decision: approved, reason: "clear and short" }]
`;
const noHuman = `agents:
  developer: ["Refactored auth into token.ts and session.ts."]
  deployer: ["Ready to deploy 2.0.0 to staging."]
`;

let dir: string;
let server: Served;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  dir = project({
    '.troupe/pipelines/write.yaml': writerPipeline,
    '.troupe/pipelines/deploy.yaml': readFileSync(example('human-deploy'), 'utf8'),
    '.troupe/config.yaml': 'default_pipeline: write\n',
    'write-script.yaml': writeScript,
    'no-human.yaml': noHuman,
  });
  [server, browser] = await Promise.all([
    serve(dir),
    chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    }),
  ]);
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const shot = (name: string) => page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });

describe('the dashboard', () => {
  it('starts a scripted run from the page and shows it complete, live', async () => {
    await page.goto(server.url);
    await page.getByTestId('run-input').fill('Write the release notes');
    await page.locator('details.more summary').click();
    await page.getByTestId('run-script').fill('write-script.yaml');
    await page.getByTestId('run-submit').click();

    await page.waitForURL(/\/tasks\/T-/);
    // the writer is lit while it works, then the stages fill in as the events arrive
    await page.locator('[data-testid="node-writer"][data-state="running"]').waitFor({ timeout: 5000 });
    await expectText(page.getByTestId('detail-status'), 'completed');
    await expectText(page.getByTestId('stage-1'), 'live dashboard');
    await expectText(page.getByTestId('stage-2').getByTestId('gate-verdict'), 'clear and short');
    expect(await page.locator('[data-testid="node-editor"]').getAttribute('data-state')).toBe('done');
    await shot('task-detail');
  });

  it('puts a waiting task first; a person answers and approves it from the page', async () => {
    const started = await fetch(new URL('/api/run', server.url), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ input: 'Refactor auth', pipeline: 'deploy', script: 'no-human.yaml' }),
    });
    const { task_id: id } = (await started.json()) as { task_id: string };
    await page.getByTestId('nav-tasks').click();
    const card = page.getByTestId(`waiting-${id}`);
    await expectText(card, 'What features do you want?');
    await expectText(page.getByTestId('task-table'), 'completed');
    await shot('task-list');

    await card.click();
    await page.getByTestId('answer-input').fill('Keep the public API unchanged');
    await page.getByTestId('answer').click();
    await page.getByTestId('gate-actions').waitFor();
    expect(await page.locator('[data-testid="node-deployer"]').getAttribute('data-state')).toBe('waiting');
    await shot('task-waiting-gate');
    await page.getByTestId('gate-reason').fill('LGTM');
    await page.getByTestId('approve').click();
    await expectText(page.getByTestId('detail-status'), 'completed');
    await expectText(page.getByTestId('stage-2').getByTestId('gate-verdict'), 'LGTM');
  });

  it('edits a pipeline and reports an error at its line', async () => {
    await page.getByTestId('nav-pipelines').click();
    await page.getByTestId('pipeline-write').click();
    await page.getByTestId('pipeline-graph').waitFor();
    const editor = page.getByTestId('yaml-editor');
    await expectValue(editor, 'handoffs: [{ to: editor }]');
    const text = await editor.inputValue();
    await editor.fill(text.replace('to: editor', 'to: editr'));
    await page.getByTestId('gutter-error-5').waitFor({ timeout: 5000 });
    await expectText(page.getByTestId('diagnostics'), 'editr');
    expect(await page.getByTestId('save-pipeline').isDisabled()).toBe(true);
    await shot('pipeline-editor');
  });
});

async function expectText(locator: ReturnType<Page['getByTestId']>, text: string): Promise<void> {
  await locator.filter({ hasText: text }).first().waitFor({ timeout: 8000 });
}

async function expectValue(locator: ReturnType<Page['getByTestId']>, text: string): Promise<void> {
  for (let i = 0; i < 80; i++) {
    if ((await locator.inputValue()).includes(text)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the editor never held ${text}`);
}

afterAll(() => {
  process.stdout.write(`dashboard screenshots: ${shots}\n`);
});
