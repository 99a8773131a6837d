import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { expectText, launchBrowser, noBrowser } from './support/browser.js';
import { readSse, type Served, serve } from './support/serve.js';
import { example, project } from './support/troupe.js';

/** The dashboard in Debian's Chromium (never a downloaded browser), against a real server. */

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
      delay_ms: 1500
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

const chunkyPipeline = `agents:
  - id: planner
    runtime: claude
    system_prompt: "Plan: {{ input }} {{ chunks }}"
    chunks:
      initial: ["write the parser", "write the tests"]
    gate: { type: human }
`;

// a person approves the draft; then the sender's provider turns out to be closed (on its own
// provider, gemini, so no other task of this file waits for it)
const gatedPipeline = `agents:
  - id: drafter
    runtime: claude
    gate: { type: human }
    handoffs: [{ to: sender }]
  - id: sender
    runtime: gemini
`;

let dir: string;
let server: Served;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  if (noBrowser) return;
  dir = project({
    '.troupe/pipelines/write.yaml': writerPipeline,
    '.troupe/pipelines/deploy.yaml': readFileSync(example('human-deploy'), 'utf8'),
    '.troupe/config.yaml': [
      'default_pipeline: write',
      'routing:',
      '  tiers: {fast: {runtime: gemini, model: gemini-2.5-flash}, deep: {runtime: claude, model: opus}}',
      '  learn: false',
      '',
    ].join('\n'),
    '.troupe/pipelines/routed.yaml': 'agents:\n  - id: coder\n    runtime: claude\n    model: auto\n',
    'routed-script.yaml': 'agents:\n  coder: ["patched"]\n',
    'write-script.yaml': writeScript,
    'no-human.yaml': noHuman,
    '.troupe/pipelines/chunky.yaml': chunkyPipeline,
    // its own provider: its closed window holds up no other task
    '.troupe/pipelines/limited.yaml': 'agents:\n  - id: solo\n    runtime: codex\n',
    '.troupe/pipelines/design.yaml': readFileSync(example('design-session'), 'utf8'),
    'design-script.yaml': readFileSync(example('design-session', 'script.yaml'), 'utf8'),
    '.troupe/pipelines/gated.yaml': gatedPipeline,
    '.troupe/pipelines/talk.yaml': 'agents:\n  - id: talker\n    runtime: claude\n',
    '.troupe/pipelines/ask-ghost.yaml': 'agents:\n  - id: asker\n    runtime: mailbox\n    handle: ghost\n',
    // ghost's mailbox is a file, not a folder: nothing can be delivered to it
    '.agent-mail/agents/ghost': 'not a mailbox',
  });
  [server, browser] = await Promise.all([serve(dir), launchBrowser()]);
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** Starts a task through the API; its id. */
async function run(body: Record<string, unknown>): Promise<string> {
  const started = await fetch(new URL('/api/run', server.url), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return ((await started.json()) as { task_id: string }).task_id;
}

function post(path: string, body: Record<string, unknown> = {}): Promise<Response> {
  return fetch(new URL(path, server.url), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function waitForStatus(id: string, status: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const task = (await (await fetch(new URL(`/api/tasks/${id}`, server.url))).json()) as { status: string };
    if (task.status === status) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`task ${id} never reached ${status}`);
}

const shot = (name: string) => page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });

describe.skipIf(noBrowser)('the dashboard', () => {
  it('starts a scripted run from the page and shows it complete, live', async () => {
    await page.goto(server.url);
    await page.getByTestId('run-input').fill('Write the release notes');
    await page.locator('details.more summary').click();
    await page.getByTestId('run-script').fill('write-script.yaml');
    await page.getByTestId('run-submit').click();

    await page.waitForURL(/\/tasks\/T-/);
    // the writer is lit while it works, then the stages fill in as the events arrive
    await page.locator('[data-testid="node-writer"][data-state="running"]').waitFor({ timeout: 5000 });
    // its output streams in line by line while the stage still runs
    const partial = await page.waitForFunction(
      () => {
        // runs in the page (no DOM types in this project)
        const doc = (
          globalThis as unknown as {
            document: { querySelector(s: string): { textContent: string | null } | null };
          }
        ).document;
        const text =
          doc.querySelector('[data-testid="stage-1"].running [data-testid="stage-output"]')?.textContent ??
          '';
        return text.includes('A first draft') && !text.includes('live dashboard') ? text : null;
      },
      null,
      { timeout: 5000, polling: 20 },
    );
    expect(await partial.jsonValue()).toContain('A first draft of the release notes');
    await shot('task-streaming');
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

describe.skipIf(noBrowser)('the dashboard: sessions, chunks and the agent form', () => {
  it('labels a task waiting for a provider to reset, in its detail and in the list', async () => {
    const id = await run({
      input: 'limited',
      pipeline: 'limited',
      script: { agents: { solo: [{ error: 'rate_limit', reset_after_s: 600 }, 'done'] } },
    });
    await page.goto(new URL(`/tasks/${id}`, server.url).toString());
    await expectText(page.getByTestId('detail-status'), 'rate-limited');
    await page.getByTestId('nav-tasks').click();
    await expectText(page.getByTestId('task-table'), 'rate-limited');
    await fetch(new URL(`/api/tasks/${id}/cancel`, server.url), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
  });

  it('shows the tier a routed stage ran on, and why', async () => {
    const id = await run({ input: 'fix it', pipeline: 'routed', script: 'routed-script.yaml' });
    await page.goto(new URL(`/tasks/${id}`, server.url).toString());
    await expectText(page.getByTestId('detail-status'), 'completed');
    const tier = page.getByTestId('stage-1').getByTestId('stage-tier');
    await expectText(tier, 'deep · opus');
    expect(await tier.getAttribute('title')).toBe('recommended deep: default tier');
  });

  it('shows a session round by round, with who voted to agree and the outcome', async () => {
    const id = await run({
      input: 'How should we do auth?',
      pipeline: 'design',
      script: 'design-script.yaml',
    });
    await page.goto(new URL(`/tasks/${id}`, server.url).toString());
    await expectText(page.getByTestId('session-outcome'), 'consensus after 2 rounds');
    await expectText(
      page.getByTestId('round-1').getByTestId('turn-1-security'),
      'Token revocation is the weak point',
    );
    await expectText(page.getByTestId('round-1').getByTestId('round-votes'), 'nobody agreed');
    await expectText(
      page.getByTestId('round-2').getByTestId('round-votes'),
      'agreed: architect, security (2/2)',
    );
    await expectText(page.getByTestId('turn-2-architect'), '✓ agrees');
    await expectText(page.getByTestId('session-summary'), 'Decision: short-lived JWT');
    await shot('task-session');
  });

  it('a chunk board: add, mark done and remove from the page', async () => {
    const id = await run({
      input: 'a parser',
      pipeline: 'chunky',
      script: { agents: { planner: ['planned'] } },
    });
    await page.goto(new URL(`/tasks/${id}`, server.url).toString());
    await expectText(page.getByTestId('chunks-pending'), 'write the tests');
    await page.getByTestId('chunk-input').fill('document it');
    await page.getByTestId('chunk-add').click();
    await expectText(page.getByTestId('chunks-pending').getByTestId('chunk-C-003'), 'document it');
    await page.getByTestId('chunk-done-C-001').click();
    await expectText(page.getByTestId('chunks-done').getByTestId('chunk-C-001'), 'write the parser');
    await page.getByTestId('chunk-remove-C-002').click();
    await page.getByTestId('chunk-C-002').waitFor({ state: 'detached', timeout: 8000 });
    await expectText(page.getByTestId('chunk-board'), '1/2 done');
    await shot('task-chunks');
    const board = (await (await fetch(new URL(`/api/tasks/${id}/chunks`, server.url))).json()) as {
      chunks: { id: string; status: string }[];
    };
    expect(board.chunks.map((c) => [c.id, c.status])).toEqual([
      ['C-001', 'done'],
      ['C-003', 'pending'],
    ]);
  });

  it('adds, edits and removes an agent with the form; a change that breaks the pipeline is refused', async () => {
    await page.goto(new URL('/pipelines/write', server.url).toString());
    await page.getByTestId('agent-row-editor').waitFor();
    await page.getByTestId('agent-add').click();
    await page.getByTestId('agent-id').fill('reviewer');
    await page.getByTestId('agent-runtime').selectOption('gemini');
    await page.getByTestId('agent-prompt').fill('Review: {{ input }}');
    await page.getByTestId('handoff-add').click();
    await page.getByTestId('handoff-to-0').fill('writer');
    await page.getByTestId('handoff-condition-0').fill('on_reject');
    await page.getByTestId('gate-type').selectOption('llm');
    await page.getByTestId('gate-prompt').fill('Is it right?');
    await page.getByTestId('gate-max-retries').fill('2');
    await page.getByTestId('agent-human-input').selectOption('before');
    await page.getByTestId('agent-save').click();
    await page.getByTestId('agent-row-reviewer').waitFor();
    await page.getByTestId('node-reviewer').waitFor();
    await expectValue(page.getByTestId('yaml-editor'), 'id: reviewer');
    const yaml = readFileSync(path.join(dir, '.troupe/pipelines/write.yaml'), 'utf8');
    expect(yaml).toContain('  - id: reviewer\n    runtime: gemini\n    system_prompt: "Review: {{ input }}"');
    expect(yaml).toContain('condition: on_reject');
    expect(yaml).toContain('human_input: before');

    // a handoff to an agent that does not exist: refused, the file unchanged
    await page.getByTestId('agent-edit-editor').click();
    await page.getByTestId('handoff-add').click();
    await page.getByTestId('handoff-to-0').fill('nobody');
    await page.getByTestId('agent-save').click();
    await expectText(page.getByTestId('agent-form-error'), 'nobody');
    expect(readFileSync(path.join(dir, '.troupe/pipelines/write.yaml'), 'utf8')).toBe(yaml);
    await shot('agent-form');
    await page.getByTestId('handoff-to-0').fill('reviewer');
    await page.getByTestId('agent-save').click();
    await page.getByTestId('agent-form').waitFor({ state: 'detached' });
    expect(readFileSync(path.join(dir, '.troupe/pipelines/write.yaml'), 'utf8')).toMatch(
      /- id: editor[\s\S]*handoffs:\n\s+- to: reviewer/,
    );

    // removing the reviewer now breaks the editor's handoff: refused; then the handoff goes, and the agent
    page.once('dialog', (d) => void d.accept());
    await page.getByTestId('agent-remove-reviewer').click();
    await expectText(page.getByTestId('agent-error'), 'reviewer');
    await page.getByTestId('agent-edit-editor').click();
    await page.getByRole('button', { name: '✕' }).click();
    await page.getByTestId('agent-save').click();
    await page.getByTestId('agent-form').waitFor({ state: 'detached' });
    page.once('dialog', (d) => void d.accept());
    await page.getByTestId('agent-remove-reviewer').click();
    await page.getByTestId('agent-row-reviewer').waitFor({ state: 'detached' });
    expect(readFileSync(path.join(dir, '.troupe/pipelines/write.yaml'), 'utf8')).toBe(writerPipeline);
  });
});

describe.skipIf(noBrowser)('the dashboard shows everything', () => {
  let gated: string;

  it('lists a task waiting at a human gate under All and under Active', async () => {
    gated = await run({
      input: 'draft and send',
      pipeline: 'gated',
      script: {
        agents: {
          drafter: ['a draft'],
          sender: [{ error: 'rate_limit', reset_after_s: 600, delay_ms: 1500 }],
        },
      },
    });
    await page.goto(server.url);
    await page.getByTestId(`waiting-${gated}`).waitFor({ timeout: 8000 });
    const row = page.getByTestId(`task-row-${gated}`);
    await expectText(row.getByTestId('task-status'), 'needs approval');
    await page.getByRole('button', { name: 'Active', exact: true }).click();
    await expectText(row.getByTestId('task-status'), 'needs approval');
    await shot('task-list-active-waiting');
  });

  it('shows a task that becomes rate-limited without a reload', async () => {
    await page.goto(new URL(`/tasks/${gated}`, server.url).toString());
    await expectText(page.getByTestId('detail-status'), 'needs approval');
    expect((await post(`/api/tasks/${gated}/approve`)).status).toBe(202);
    // the sender starts (an event the page always followed), then, later, its provider is closed
    await expectText(page.getByTestId('detail-status'), 'rate-limited');
    await expectText(page.getByTestId('stage-2'), 'interrupted');
    await post(`/api/tasks/${gated}/cancel`);
  });

  it('shows a parked task in red with its reason; Resume takes it up again', async () => {
    const id = await run({ input: 'Refactor auth', pipeline: 'deploy', script: 'no-human.yaml' });
    await waitForStatus(id, 'awaiting_human_input');
    // as a worker records it when the task's runs kept failing (docs/distributed.md)
    const store = openSqliteStore(path.join(dir, '.troupe', 'troupe.db'));
    store.append(id, [{ type: 'task_parked', reason: 'refused append', failures: 4 }], { status: 'parked' });
    store.close();
    await page.goto(new URL(`/tasks/${id}`, server.url).toString());
    await expectText(page.getByTestId('detail-status'), 'parked');
    await expectText(page.getByTestId('parked'), 'Parked after 4 failed runs: refused append');
    await shot('task-parked');
    await page.getByTestId('resume-parked').click();
    await expectText(page.getByTestId('detail-status'), 'needs answer');
    await post(`/api/tasks/${id}/cancel`);
  });

  it('shows mail that could not be delivered', async () => {
    const id = await run({ input: 'anyone there?', pipeline: 'ask-ghost' });
    await page.goto(new URL(`/tasks/${id}`, server.url).toString());
    await expectText(
      page.getByTestId('mail-failed'),
      'Mail to ghost not delivered (question: asker: stage 1',
    );
    await post(`/api/tasks/${id}/cancel`);
  });

  it('shows the output a running stage wrote before the page opened, then what follows', async () => {
    const first = 'the first line, written before the page opened';
    // a line a second, for 40 s: the stage runs on while the page is looked at
    const id = await run({
      input: 'talk',
      pipeline: 'talk',
      script: { agents: { talker: [{ reply: `${first}\n${'.\n'.repeat(39)}`, delay_ms: 40_000 }] } },
    });
    await readSse(new URL(`/api/tasks/${id}/events`, server.url).toString(), {
      until: (f) => f.event === 'stage_output' && JSON.stringify(f.data).includes('first line'),
    });
    await page.goto(new URL(`/tasks/${id}`, server.url).toString());
    const output = page.locator('[data-testid="stage-1"].running [data-testid="stage-output"]');
    await output.filter({ hasText: first }).waitFor({ timeout: 8000 });
    // what streams in afterwards is added to it, once
    const dots = (text: string) => text.split('\n.').length - 1;
    const opened = dots((await output.textContent()) ?? '');
    await page.waitForFunction(
      ({ before }) => {
        const doc = (
          globalThis as unknown as {
            document: { querySelector(s: string): { textContent: string | null } | null };
          }
        ).document;
        const text =
          doc.querySelector('[data-testid="stage-1"] [data-testid="stage-output"]')?.textContent ?? '';
        return text.split('\n.').length - 1 > before;
      },
      { before: opened },
      { timeout: 8000, polling: 50 },
    );
    const text = (await output.textContent()) ?? '';
    expect(text.split(first).length - 1).toBe(1);
    expect(text).toMatch(new RegExp(`^${first}\n(\\.\n)+$`));
    await shot('task-output-replayed');
    await post(`/api/tasks/${id}/cancel`);
  });
});

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
