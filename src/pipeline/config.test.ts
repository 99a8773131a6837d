import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PipelineError } from '../core/errors.js';
import { runtimesWith } from '../core/runtimes.js';
import { DEFAULT_PRICES } from '../scheduler/prices.js';
import {
  DEFAULT_GATE_SYSTEM_PROMPT,
  loadProjectConfig,
  parseProjectConfig,
  saveDefaultPipeline,
  timeoutFor,
} from './config.js';
import { removeTempDirs, tempDir } from './test-files.js';

afterEach(removeTempDirs);

describe('loadProjectConfig', () => {
  it('defaults when there is no config file', () => {
    expect(loadProjectConfig(tempDir())).toEqual({
      default_pipeline: null,
      qa: 'default',
      pipeline: { max_stages: 20 },
      gate: { model: null, timeout: 120, system_prompt: DEFAULT_GATE_SYSTEM_PROMPT, runtime: null },
      // a mailbox agent may answer tomorrow: it has none
      timeouts: Object.fromEntries(runtimesWith('timesOut').map((r) => [r, 600])),
      script: null,
      trust_workspace: true,
      prices: DEFAULT_PRICES,
      routing: null,
      limits: {},
      registry: null,
      queue: null,
      store: null,
      tracker: null,
      server: { script_commands: false },
    });
    expect(loadProjectConfig(tempDir({ '.troupe/config.yaml': '' })).pipeline.max_stages).toBe(20);
    expect(loadProjectConfig(tempDir({ '.troupe/config.yaml': 'registry: ../registry\n' })).registry).toBe(
      '../registry',
    );
  });

  it('reads the switches the person turns on: mail verdicts for gates, commands in API scripts', () => {
    const config = loadProjectConfig(
      tempDir({ '.troupe/config.yaml': 'gate:\n  mail_verdicts: true\nserver:\n  script_commands: true\n' }),
    );
    expect(config.gate.mail_verdicts).toBe(true);
    expect(config.server.script_commands).toBe(true);
  });

  it('reads routing tiers (cheapest first, the last the default) and limits per provider', () => {
    const config = loadProjectConfig(
      tempDir({
        '.troupe/config.yaml': [
          'routing:',
          '  tiers:',
          '    fast: {runtime: gemini, model: gemini-2.5-flash, effort: low}',
          '    deep: {model: opus}',
          '  rules: [{tier: fast, size: s, keywords: [typo, docs]}]',
          '  learn: {min_samples: 5}',
          'limits:',
          '  claude: {concurrency: 2}',
          '  gemini: {requests_per_minute: 60}',
          '',
        ].join('\n'),
      }),
    );
    expect(config.routing).toMatchObject({
      tiers: {
        fast: { runtime: 'gemini', model: 'gemini-2.5-flash', effort: 'low' },
        deep: { runtime: null, model: 'opus', effort: null },
      },
      default: 'deep',
      rules: [{ tier: 'fast', size: ['S'], agents: null, labels: null, keywords: ['typo', 'docs'] }],
      learn: { enabled: true, min_samples: 5, prefer_approval: 0.8, avoid_rejection: 0.5, explore: true },
    });
    expect(config.limits).toEqual({
      claude: { concurrency: 2, requests_per_minute: null },
      gemini: { concurrency: null, requests_per_minute: 60 },
    });
    expect(() =>
      loadProjectConfig(tempDir({ '.troupe/config.yaml': 'routing:\n  tiers: {fast: {effort: extreme}}\n' })),
    ).toThrow(/config\.yaml:2:\d+/);
  });

  it('prices in config add to and override the default price table', () => {
    const config = loadProjectConfig(
      tempDir({
        '.troupe/config.yaml': 'prices:\n  sonnet: {input: 2, output: 10}\n  llama: {input: 0, output: 0}\n',
      }),
    );
    expect(config.prices.sonnet).toEqual({ input: 2, output: 10 });
    expect(config.prices.llama).toEqual({ input: 0, output: 0 });
    expect(config.prices.opus).toEqual(DEFAULT_PRICES.opus);
    expect(DEFAULT_PRICES.sonnet).toEqual({ input: 3, output: 15, cached_input: 0.3 });
  });

  it('reads the gate runtime and trust_workspace', () => {
    const config = loadProjectConfig(
      tempDir({ '.troupe/config.yaml': 'trust_workspace: false\ngate:\n  runtime: gemini\n' }),
    );
    expect(config.trust_workspace).toBe(false);
    expect(config.gate.runtime).toBe('gemini');
  });

  it('reads qa: strict, and refuses other values', () => {
    expect(loadProjectConfig(tempDir({ '.troupe/config.yaml': 'qa: strict\n' })).qa).toBe('strict');
    expect(() => loadProjectConfig(tempDir({ '.troupe/config.yaml': 'qa: paranoid\n' }))).toThrow(/qa/);
  });

  it("reads every field (aqm's own settings as an example)", () => {
    const root = tempDir({
      '.troupe/config.yaml': `default_pipeline: dev
pipeline:
  max_stages: 30
gate:
  model: haiku
  timeout: 180
  system_prompt: Judge.
timeouts:
  claude: 900
script: replies.yaml
`,
    });
    const config = loadProjectConfig(root);
    expect(config).toMatchObject({
      default_pipeline: 'dev',
      pipeline: { max_stages: 30 },
      gate: { model: 'haiku', timeout: 180, system_prompt: 'Judge.' },
      script: 'replies.yaml',
    });
    expect(timeoutFor(config, 'claude')).toBe(900);
    expect(timeoutFor(config, 'gemini')).toBe(600);
    expect(timeoutFor(config, 'some-future-runtime')).toBe(600);
  });

  it('falls back to .aqm/config.yaml, and .troupe wins over it', () => {
    expect(loadProjectConfig(tempDir({ '.aqm/config.yaml': 'default_pipeline: a\n' })).default_pipeline).toBe(
      'a',
    );
    const both = tempDir({
      '.aqm/config.yaml': 'default_pipeline: a\n',
      '.troupe/config.yaml': 'default_pipeline: t\n',
    });
    expect(loadProjectConfig(both).default_pipeline).toBe('t');
  });

  it('an unknown key is an error at the key (aqm ignored it)', () => {
    const root = tempDir({ '.troupe/config.yaml': 'gate:\n  timout: 30\n' });
    let error: PipelineError | undefined;
    try {
      loadProjectConfig(root);
    } catch (e) {
      error = e as PipelineError;
    }
    expect(error).toBeInstanceOf(PipelineError);
    expect([error?.line, error?.col, error?.detail]).toEqual([2, 3, 'unknown field `timout` in `gate`']);
    expect(error?.hint).toBe('did you mean `timeout`?');
  });

  it('unknown runtimes in timeouts and bad values are errors', () => {
    expect(() => loadProjectConfig(tempDir({ '.troupe/config.yaml': 'timeouts:\n  gpt: 5\n' }))).toThrow(
      /config\.yaml:2:3: unknown field `gpt` in `timeouts`/,
    );
    expect(() =>
      loadProjectConfig(tempDir({ '.troupe/config.yaml': 'pipeline:\n  max_stages: 0\n' })),
    ).toThrow(/config\.yaml:2:15: `pipeline\.max_stages` must be >= 1/);
  });

  it('broken YAML is an error (aqm silently used the defaults)', () => {
    expect(() => loadProjectConfig(tempDir({ '.troupe/config.yaml': 'gate: [\n' }))).toThrow(PipelineError);
  });
});

describe("aqm's config read in place", () => {
  const text = 'default_pipeline: review\nfoo: bar\ngate:\n  model: m\n  colour: red\n';

  it('passes over the keys only aqm knows, each with a warning at its place', () => {
    const warnings: string[] = [];
    const config = parseProjectConfig(text, 'p/.aqm/config.yaml', (line) => warnings.push(line));
    expect([config.default_pipeline, config.gate.model]).toEqual(['review', 'm']);
    expect(warnings.sort()).toEqual([
      'p/.aqm/config.yaml:2:1: `foo` is not a troupe setting; passed over',
      'p/.aqm/config.yaml:5:3: `gate.colour` is not a troupe setting; passed over',
    ]);
  });

  it("troupe's own config keeps refusing them", () => {
    expect(() => parseProjectConfig(text, 'p/.troupe/config.yaml')).toThrow(/unknown field `foo`/);
  });
});

describe('saveDefaultPipeline', () => {
  it('creates .troupe/config.yaml', () => {
    const root = tempDir();
    saveDefaultPipeline(root, 'dev');
    expect(readFileSync(path.join(root, '.troupe/config.yaml'), 'utf8')).toBe('default_pipeline: dev\n');
  });

  it('keeps the rest of the file, comments included', () => {
    const root = tempDir({
      '.troupe/config.yaml': '# team settings\ndefault_pipeline: old\ngate:\n  timeout: 30 # slow model\n',
    });
    saveDefaultPipeline(root, 'dev');
    expect(readFileSync(path.join(root, '.troupe/config.yaml'), 'utf8')).toBe(
      '# team settings\ndefault_pipeline: dev\ngate:\n  timeout: 30 # slow model\n',
    );
  });

  it('carries an aqm project’s settings over', () => {
    const root = tempDir({ '.aqm/config.yaml': 'pipeline:\n  max_stages: 30\n' });
    saveDefaultPipeline(root, 'dev');
    expect(loadProjectConfig(root)).toMatchObject({ default_pipeline: 'dev', pipeline: { max_stages: 30 } });
  });

  it('refuses to rewrite a broken file', () => {
    const root = tempDir({ '.troupe/config.yaml': 'gate: [\n' });
    expect(() => saveDefaultPipeline(root, 'dev')).toThrow(PipelineError);
    expect(readFileSync(path.join(root, '.troupe/config.yaml'), 'utf8')).toBe('gate: [\n');
  });
});

describe('tracker: (troupe watch)', () => {
  it('reads the tracker and its rules, with defaults', () => {
    const config = parseProjectConfig(
      [
        'tracker:',
        '  kind: github',
        '  owner: acme',
        '  repo: app',
        '  labels: [troupe]',
        '  pipelines: {Bug: fix}',
        '  concurrency: {max: 2, per_state: {open: 1}}',
        '  max_retries: 5',
      ].join('\n'),
      'p/.troupe/config.yaml',
    );
    expect(config.tracker).toEqual({
      tracker: { kind: 'github', owner: 'acme', repo: 'app', labels: ['troupe'] },
      active_states: null,
      terminal_states: null,
      handoff_state: null,
      pipelines: { bug: 'fix' },
      default_pipeline: null,
      polling: { interval_ms: 30_000 },
      concurrency: { max: 2, per_state: { open: 1 } },
      max_retries: 5,
      retry_backoff_ms: 10_000,
      max_retry_backoff_ms: 300_000,
      stall_timeout_ms: 300_000,
      pull_request: { draft: false, base: null, remote: 'origin' },
    });
  });

  it('pull_request: on by default for GitHub and Linear, off for a backlog; true, false or its options', () => {
    const read = (lines: string) =>
      parseProjectConfig(`tracker:\n${lines}`, 'p/.troupe/config.yaml').tracker?.pull_request;
    expect(read('  kind: linear\n  project_slug: abc\n')).toEqual({
      draft: false,
      base: null,
      remote: 'origin',
    });
    expect(read('  kind: backlog\n')).toBeNull();
    expect(read('  kind: backlog\n  pull_request: true\n')).toEqual({
      draft: false,
      base: null,
      remote: 'origin',
    });
    expect(read('  kind: github\n  owner: a\n  repo: b\n  pull_request: false\n')).toBeNull();
    expect(
      read(
        '  kind: github\n  owner: a\n  repo: b\n  pull_request: {draft: true, base: main, remote: upstream}\n',
      ),
    ).toEqual({ draft: true, base: 'main', remote: 'upstream' });
    expect(() => read('  kind: backlog\n  pull_request: {remote: --upload-pack=x}\n')).toThrow(
      /config\.yaml:3:\d+.*git remote/,
    );
    expect(() => read('  kind: backlog\n  pull_request: {title: x}\n')).toThrow(/config\.yaml:3:\d+/);
  });

  it('locates a mistake: an option of another tracker, a missing repo', () => {
    expect(() =>
      parseProjectConfig('tracker:\n  kind: backlog\n  owner: acme\n', 'p/.troupe/config.yaml'),
    ).toThrow(/config\.yaml:3:\d+.*owner/);
    expect(() =>
      parseProjectConfig('tracker:\n  kind: github\n  owner: acme\n', 'p/.troupe/config.yaml'),
    ).toThrow(/config\.yaml:\d+:\d+.*repo/);
  });
});
