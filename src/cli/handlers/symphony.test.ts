import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PipelineError, UsageError } from '../../core/errors.js';
import { DiagnosticSink } from '../../pipeline/diagnostics.js';
import { loadPipeline } from '../../pipeline/load.js';
import { readWorkflow } from '../../pipeline/symphony/workflow.js';
import { DEFAULT_TEMPLATE } from '../commands/init.js';
import { Exit } from '../exit-codes.js';
import { init } from './init.js';
import { capturedIo, scratchProject } from './testing.js';
import { validate } from './validate.js';

const REAL = readFileSync('test/fixtures/symphony/elixir-WORKFLOW.md', 'utf8');
const flags = { param: [] };
const initDefaults = { name: 'default', template: DEFAULT_TEMPLATE, yes: true };

describe('troupe validate WORKFLOW.md', () => {
  it("says Symphony's own WORKFLOW.md is valid, and lists the settings troupe ignores", async () => {
    const dir = scratchProject({ 'WORKFLOW.md': REAL });
    const io = capturedIo(dir);
    expect(await validate('WORKFLOW.md', flags, io)).toBe(Exit.ok);
    const lines = io.stdout().replaceAll(`${dir}/`, '').trimEnd().split('\n');
    expect(lines).toContain('WORKFLOW.md:45:3: info: codex.service_tier: not read by troupe: ignored');
    expect(lines.at(-1)).toBe(
      '✓ valid Symphony workflow: 1 agent (codex), tracker linear, 2 settings ignored',
    );
  });

  it('exits 2 with one located line per error: the settings and the prompt', async () => {
    const broken = REAL.replace('interval_ms: 5000', 'interval_ms: soon').replace(
      'Title: {{ issue.title }}',
      'Title: {{ issue.title | shout }}',
    );
    const dir = scratchProject({ 'WORKFLOW.md': broken });
    const io = capturedIo(dir);
    expect(await validate('WORKFLOW.md', flags, io)).toBe(Exit.usage);
    const errors = io
      .stdout()
      .replaceAll(`${dir}/`, '')
      .split('\n')
      .filter((l) => l.includes(': error: '));
    expect(errors).toEqual([
      'WORKFLOW.md:17:16: error: polling.interval_ms must be an integer greater than 0, not "soon"',
      'WORKFLOW.md:67:8: error: template_parse_error: undefined filter: shout',
    ]);
    expect(io.stdout().trimEnd().split('\n').at(-1)).toBe('✗ 2 errors, 0 warnings');
  });

  it('takes any .md whose front matter has tracker:, and answers in JSON', async () => {
    const dir = scratchProject({
      'flows/linear.md': '---\ntracker:\n  kind: linear\n---\n{{ issue.nope }}\n',
    });
    const io = capturedIo(dir);
    expect(await validate(undefined, { ...flags, file: 'flows/linear.md', json: true }, io)).toBe(Exit.usage);
    const json = JSON.parse(io.stdout());
    expect(json).toMatchObject({ valid: false, format: 'symphony', summary: { tracker: 'linear' } });
    expect(json.errors.map((e: { line: number; col: number }) => `${e.line}:${e.col}`)).toEqual([
      '2:1',
      '5:4',
    ]);
  });

  it('leaves other Markdown and pipelines to the pipeline checks', async () => {
    const dir = scratchProject({ 'notes.md': '# notes\n' });
    expect(await validate('notes.md', flags, capturedIo(dir))).toBe(Exit.usage);
  });
});

describe('troupe init --from-symphony', () => {
  it('writes the pipeline and the tracker file, and lists what maps, what differs and what is not supported', async () => {
    const root = scratchProject({ 'WORKFLOW.md': REAL });
    const io = capturedIo(root);
    expect(await init({ ...initDefaults, fromSymphony: true }, io)).toBe(0);
    const out = io.stdout();
    expect(out).toMatch(
      /^converted WORKFLOW.md \(it is left as it was\):\n {2}wrote .troupe\/pipelines\/default.yaml/,
    );
    for (const heading of [
      'carried over as it is:',
      'differs in troupe (docs/trackers.md):',
      'not supported yet:',
    ])
      expect(out).toContain(`\n${heading}\n`);
    expect(out).toContain('  codex.service_tier: not read by troupe: ignored');
    expect(out).toMatch(/\nnext: troupe validate .troupe\/trackers\/default.md/);

    const pipeline = loadPipeline(join(root, '.troupe', 'pipelines', 'default.yaml'));
    expect(pipeline.agents[0]).toMatchObject({
      id: 'codex',
      runtime: 'codex',
      model: 'gpt-5.5',
      effort: 'max',
      permissions: 'full',
      timeout: 3600,
      system_prompt: '{{ input }}',
    });
    // the tracker file reads back with the same reader: same settings, same prompt
    const trackerText = readFileSync(join(root, '.troupe', 'trackers', 'default.md'), 'utf8');
    const sink = new DiagnosticSink();
    const back = readWorkflow(trackerText, 'default.md', sink);
    const original = readWorkflow(REAL, 'WORKFLOW.md', new DiagnosticSink());
    expect(sink.list()).toEqual([]);
    expect(back!.prompt).toBe(original!.prompt);
    for (const key of ['tracker', 'polling', 'workspace', 'hooks', 'agent'] as const)
      expect(back!.settings[key], key).toEqual(original!.settings[key]);
    expect(await validate('.troupe/trackers/default.md', flags, capturedIo(root))).toBe(Exit.ok);
  });

  it('never copies a secret written out in the WORKFLOW.md', async () => {
    const root = scratchProject({
      'flow/WORKFLOW.md':
        '---\ntracker:\n  kind: linear\n  project_slug: p\n  api_key: lin_api_SECRET\n---\nDo {{ issue.title }}\n',
    });
    const io = capturedIo(root);
    await init({ ...initDefaults, name: 'linear', fromSymphony: 'flow/WORKFLOW.md' }, io);
    const tracker = readFileSync(join(root, '.troupe', 'trackers', 'linear.md'), 'utf8');
    expect(tracker).not.toContain('SECRET');
    expect(io.stdout()).not.toContain('SECRET');
    expect(tracker).toContain('api_key: $LINEAR_API_KEY');
    expect(io.stdout()).toContain('tracker.api_key: written out in the WORKFLOW.md, so not copied');
  });

  it('maps another codex command to runtime: command, and refuses a broken workflow or files already there', async () => {
    const root = scratchProject({
      'WORKFLOW.md': '---\ncodex:\n  command: my-agent --fast\n---\nDo {{ issue.title }}\n',
    });
    await init({ ...initDefaults, fromSymphony: true }, capturedIo(root));
    const pipeline = loadPipeline(join(root, '.troupe', 'pipelines', 'default.yaml'));
    expect(pipeline.agents[0]).toMatchObject({
      runtime: 'command',
      command: ['bash', '-lc', 'my-agent --fast'],
    });
    await expect(init({ ...initDefaults, fromSymphony: true }, capturedIo(root))).rejects.toThrow(UsageError);
    await expect(
      init({ ...initDefaults, fromSymphony: true, fromAqm: true }, capturedIo(root)),
    ).rejects.toThrow('--from-symphony converts a WORKFLOW.md: it takes only --name, --force and --json');

    const broken = scratchProject({ 'WORKFLOW.md': '---\n[1, 2]\n---\n' });
    await expect(init({ ...initDefaults, fromSymphony: true }, capturedIo(broken))).rejects.toThrow(
      /WORKFLOW.md:2:1: workflow_front_matter_not_a_map/,
    );
    await expect(init({ ...initDefaults, fromSymphony: true }, capturedIo(broken))).rejects.toThrow(
      PipelineError,
    );
    expect(existsSync(join(broken, '.troupe', 'pipelines', 'default.yaml'))).toBe(false);
  });
});
