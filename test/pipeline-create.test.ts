import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { project, repoRoot, troupe } from './support/troupe.js';

/** `troupe pipeline create`: written by an agent (--ai) and validated, or from a template. */

const file = (dir: string, name: string) => join(dir, '.troupe', 'pipelines', `${name}.yaml`);

/** Round 1's reply misspells a field; the fix is only given to a prompt that quotes that error. */
const fixedOnFeedback = `agents:
  author:
    - when: "unknown field .sytem_prompt. in .agents\\\\[0\\\\]."
      reply: |
        Fixed:
        \`\`\`yaml
        # a writer and an editor
        apiVersion: troupe/v1
        agents:
          - id: writer
            runtime: claude
            system_prompt: "Write: {{ input }}"
            handoffs: [{ to: editor }]
          - id: editor
            runtime: gemini
            system_prompt: "Edit: {{ input }}"
        \`\`\`
    - |
      Here is the team:
      \`\`\`yaml
      agents:
        - id: writer
          runtime: claude
          sytem_prompt: "Write: {{ input }}"
      \`\`\`
`;

describe('pipeline create --ai', () => {
  it('sends the diagnostics of an invalid reply back, and saves the valid one', async () => {
    const dir = project({ 'author.yaml': fixedOnFeedback });
    const run = await troupe(dir, [
      'pipeline',
      'create',
      'blog',
      '--ai',
      'a writer and an editor',
      '--script',
      'author.yaml',
    ]);
    expect(run.code, run.stderr).toBe(0);
    // round 2 only got the fix because its prompt carried round 1's error (the `when:` above)
    expect(run.stderr).toMatch(
      /round 1: 1 error, sent back to the agent\n {2}\.troupe\/pipelines\/blog\.yaml:4:5: error: unknown field `sytem_prompt`/,
    );
    expect(run.stderr).toContain('round 2: valid');
    // shown as YAML and as a graph, then saved
    expect(run.stdout).toContain('# a writer and an editor\napiVersion: troupe/v1\n');
    expect(run.stdout).toMatch(/^writer {2}claude\n {2}→ editor \(always\)$/m);
    expect(run.stdout).toContain('saved .troupe/pipelines/blog.yaml');
    expect(readFileSync(file(dir, 'blog'), 'utf8')).toMatch(
      /^# a writer and an editor\n[\s\S]*runtime: gemini/,
    );
    expect((await troupe(dir, ['validate', '--pipeline', 'blog'])).code).toBe(0);
  });

  it('--json reports each round with its diagnostics', async () => {
    const dir = project({ 'author.yaml': fixedOnFeedback });
    const run = await troupe(dir, [
      'pipeline',
      'create',
      'blog',
      '--ai',
      'x',
      '--script',
      'author.yaml',
      '--json',
    ]);
    const json = JSON.parse(run.stdout);
    expect(json.saved).toBe(true);
    expect(
      json.rounds.map(
        (r: { diagnostics: Array<{ severity: string }> }) =>
          r.diagnostics.filter((d) => d.severity === 'error').length,
      ),
    ).toEqual([1, 0]);
    expect(json.rounds[0].diagnostics[0]).toMatchObject({
      line: 4,
      col: 5,
      hint: 'did you mean `system_prompt`?',
    });
  });

  it('three invalid replies fail (exit 1) and write nothing', async () => {
    const dir = project({
      'author.yaml': 'agents:\n  author:\n    - "agents:\\n  - id: w\\n    runtime: nope\\n"\n',
    });
    const run = await troupe(dir, ['pipeline', 'create', 'w', '--ai', 'a writer', '--script', 'author.yaml']);
    expect(run.code).toBe(1);
    expect(run.stderr.match(/^round \d: 1 error/gm)).toHaveLength(3);
    expect(run.stderr).toMatch(
      /^troupe: the agent's pipeline still has 1 error after 3 rounds; nothing was written$/m,
    );
    expect(run.stderr).toContain(
      'hint: last round: .troupe/pipelines/w.yaml:3:14: error: `agents[0].runtime` must be one of',
    );
    expect(run.stderr).not.toMatch(/\n\s+at /); // no stack
    expect(existsSync(file(dir, 'w'))).toBe(false);
  });

  it('through a real runtime: the fake claude CLI got round 1’s diagnostics in its round 2 prompt', async () => {
    const dir = project();
    const argv = join(dir, 'argv.jsonl');
    const fakeClaude = join(repoRoot, 'test', 'fixtures', 'fake-clis', 'claude');
    const run = await troupe(dir, ['pipeline', 'create', 'w', '--ai', 'a writer', '--runtime', 'claude'], {
      TROUPE_CLAUDE_BIN: fakeClaude,
      FAKE_CLI_ARGV_FILE: argv,
    });
    // the fake replays a canned chat answer, never a pipeline
    expect(run.code).toBe(1);
    const prompts = readFileSync(argv, 'utf8')
      .trim()
      .split('\n')
      .map((line) => {
        const call = JSON.parse(line) as { argv: string[]; stdin: string };
        // the prompt is the last argument, or stdin when too long for one
        return call.stdin || call.argv.at(-1)!;
      });
    expect(prompts).toHaveLength(3);
    expect(prompts[0]).toContain('a writer');
    expect(prompts[0]).toContain('"$schema"');
    expect(prompts[0]).toContain('Example (dev-team)');
    expect(prompts[0]).not.toContain('found these errors');
    const roundOne = /^round 1: \d+ errors?, sent back to the agent\n {2}(.+)$/m.exec(run.stderr)?.[1];
    expect(roundOne).toBeDefined();
    expect(prompts[1]).toContain('`troupe validate` found these errors in it:');
    expect(prompts[1]).toContain(roundOne);
    expect(existsSync(file(dir, 'w'))).toBe(false);
  });

  it('refuses to overwrite a pipeline before any agent runs, unless --force', async () => {
    const dir = project({ '.troupe/pipelines/blog.yaml': 'agents: []\n', 'author.yaml': fixedOnFeedback });
    const run = await troupe(dir, ['pipeline', 'create', 'blog', '--ai', 'x', '--script', 'author.yaml']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /^troupe: \.troupe\/pipelines\/blog\.yaml already exists\n {2}hint: pass --force/,
    );
    expect(run.stderr).not.toContain('round 1');
    expect(readFileSync(file(dir, 'blog'), 'utf8')).toBe('agents: []\n');
    const forced = await troupe(dir, [
      'pipeline',
      'create',
      'blog',
      '--ai',
      'x',
      '--script',
      'author.yaml',
      '--force',
    ]);
    expect(forced.code).toBe(0);
    expect(readFileSync(file(dir, 'blog'), 'utf8')).toContain('id: editor');
  });

  it('in a scripted project (no agent CLI) without replies for the author: says what to do, writes nothing', async () => {
    const dir = project({
      '.troupe/config.yaml': 'default_pipeline: default\nscript: .troupe/scripts/default.yaml\n',
      '.troupe/pipelines/default.yaml': 'agents:\n  - id: dev\n    runtime: scripted\n',
      '.troupe/scripts/default.yaml': 'agents:\n  dev: ["ok"]\n',
    });
    const run = await troupe(dir, ['pipeline', 'create', 'blog', '--ai', 'a blog team']);
    expect([run.code, run.stderr]).toEqual([
      2,
      "troupe: --ai needs an agent to write the pipeline, and this project's team is scripted (no agent CLI was found)\n  hint: install claude, gemini or codex (then `troupe init --force`), start from a template (`--template NAME`, `--list-templates`), or give `--script` with replies for `author`",
    ]);
    expect(existsSync(file(dir, 'blog'))).toBe(false);
  });

  it("--template in a scripted project: a scripted team with the template's own replies, which run it", async () => {
    const dir = project({
      '.troupe/config.yaml': 'default_pipeline: default\nscript: .troupe/scripts/default.yaml\n',
      '.troupe/pipelines/default.yaml': 'agents:\n  - id: dev\n    runtime: scripted\n',
      '.troupe/scripts/default.yaml': 'agents:\n  dev: ["ok"]\n',
    });
    const made = await troupe(dir, ['pipeline', 'create', 'fan', '--template', 'fan-out-build']);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toContain('next: troupe run "your task" --pipeline fan');
    expect(readFileSync(file(dir, 'fan'), 'utf8')).not.toMatch(/runtime: (claude|gemini|codex)/);
    expect(readFileSync(join(dir, '.troupe/scripts/fan.yaml'), 'utf8')).toBe(
      readFileSync(join(repoRoot, 'templates/fan-out-build/script.yaml'), 'utf8'),
    );
    const tested = await troupe(dir, ['test', '--file', '.troupe/pipelines/fan.yaml']);
    expect([tested.code, tested.stdout]).toEqual([0, expect.stringMatching(/^✓ fan: completed in 6 stages/)]);
    // the printed next command runs it with those replies
    const run = await troupe(dir, ['run', 'your task', '--pipeline', 'fan', '--json']);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'completed' });
    // a scripted pipeline with no replies of its own is refused before the run, naming what differs
    writeFileSync(file(dir, 'other'), 'agents:\n  - id: writer\n    runtime: scripted\n');
    const other = await troupe(dir, ['run', 'x', '--pipeline', 'other']);
    expect([other.code, other.stderr]).toEqual([
      2,
      'troupe: .troupe/scripts/default.yaml:2:3: agents.dev: pipeline `other` has no agent `dev`\n  hint: its agents: writer',
    ]);
  });

  it('bad flags: one line, exit 2', async () => {
    const dir = project();
    for (const args of [
      ['pipeline', 'create', 'x'],
      ['pipeline', 'create', 'x', '--ai', 'y', '--template', 'dev-review-deploy'],
      ['pipeline', 'create', 'bad/name', '--template', 'dev-review-deploy'],
      ['pipeline', 'create', 'x', '--template', 'dev-review-deploy', '--runtime', 'nope'],
    ]) {
      const run = await troupe(dir, args);
      expect([run.code, run.stderr.split('\n')[0]], args.join(' ')).toEqual([
        2,
        expect.stringMatching(/^troupe: /),
      ]);
    }
    const unknown = await troupe(dir, ['pipeline', 'create', 'x', '--template', 'nope']);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toContain(
      'hint: templates: design-session, dev-review-deploy, fan-out-build, plan-build, spec-first-feature',
    );
  });
});

describe('pipeline create --template', () => {
  const templates = [
    'design-session',
    'dev-review-deploy',
    'fan-out-build',
    'plan-build',
    'spec-first-feature',
  ];

  it('--list-templates lists the built-in templates with what each does', async () => {
    const run = await troupe(project(), ['pipeline', 'create', '--list-templates', '--json']);
    const list = JSON.parse(run.stdout) as Array<{ name: string; description: string }>;
    expect(list.map((t) => t.name)).toEqual(templates);
    for (const t of list) expect(t.description.length).toBeGreaterThan(20);
  });

  it.each(templates)('%s: is written, validates, and runs to the end on its script', async (name) => {
    const dir = project();
    const run = await troupe(dir, ['pipeline', 'create', 'team', '--template', name]);
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(file(dir, 'team'), 'utf8')).toBe(
      readFileSync(join(repoRoot, 'templates', name, 'agents.yaml'), 'utf8'),
    );
    const validate = await troupe(dir, ['validate', '--pipeline', 'team', '--json']);
    expect(JSON.parse(validate.stdout)).toMatchObject({ valid: true, errors: [] });
    const test = await troupe(dir, [
      'test',
      '--pipeline',
      'team',
      '--script',
      join(repoRoot, 'templates', name, 'script.yaml'),
    ]);
    expect(test.stdout, test.stderr).toMatch(/^✓ team: completed/);
  });

  it('--runtime puts every agent on one runtime, keeping the rest of the file', async () => {
    const dir = project();
    await troupe(dir, [
      'pipeline',
      'create',
      'team',
      '--template',
      'dev-review-deploy',
      '--runtime',
      'codex',
    ]);
    const text = readFileSync(file(dir, 'team'), 'utf8');
    expect(text.match(/runtime: \w+/g)).toEqual(['runtime: codex', 'runtime: codex', 'runtime: codex']);
    expect(text.replace(/runtime: codex/g, 'runtime: X')).toBe(
      readFileSync(join(repoRoot, 'templates', 'dev-review-deploy', 'agents.yaml'), 'utf8').replace(
        /runtime: \w+/g,
        'runtime: X',
      ),
    );
  });
});

/** The author's reply only when its prompt holds the request typed on the terminal. */
const typedRequest = `agents:
  author:
    - when: "a writer and an editor"
      reply: |
        \`\`\`yaml
        agents:
          - id: writer
            runtime: claude
            system_prompt: "Write: {{ input }}"
        \`\`\`
    - "the request never reached me"
`;

describe("pipeline create NAME --ai (aqm's bare flag)", () => {
  it('on a terminal, asks for the request on stderr and reads it from stdin', async () => {
    const dir = project({ '.troupe/config.yaml': '', 'author.yaml': typedRequest });
    // `script` gives the command a terminal; what is piped in is typed on it
    const command = `${process.execPath} ${join(repoRoot, 'bin', 'troupe.js')} pipeline create blog --ai --script author.yaml --yes`;
    const run = await execa('script', ['-qec', command, '/dev/null'], {
      cwd: dir,
      input: 'a writer and an editor\n',
      reject: false,
      env: { NO_COLOR: '1' },
    });
    expect(run.exitCode, String(run.stdout)).toBe(0);
    expect(String(run.stdout)).toContain('what should the team do?');
    expect(readFileSync(file(dir, 'blog'), 'utf8')).toContain('Write: {{ input }}');
  });

  it('without a terminal and without a request, says exactly what to pass (exit 2)', async () => {
    const dir = project({ '.troupe/config.yaml': '' });
    const run = await troupe(dir, ['pipeline', 'create', 'blog', '--ai']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      'troupe: --ai without a request, and no terminal to ask for it on: pass it, troupe pipeline create blog --ai "what the team should do"',
    );
    expect(existsSync(file(dir, 'blog'))).toBe(false);
  });
});
