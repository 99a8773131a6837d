import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { project, repoRoot, troupe } from './support/troupe.js';

/** `troupe validate` through the built binary (npm test builds first). execa drops the final newline. */

const fixture = (name: string) => join('test', 'fixtures', 'pipelines', name);
const validate = (...args: string[]) => troupe(repoRoot, ['validate', ...args]);

const PIPE = 'agents:\n  - id: a\n    runtime: scripted\n';

describe('troupe validate', () => {
  it('a valid pipeline: exit 0 and a summary of what it uses', async () => {
    const result = await validate(fixture('valid.yaml'));
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('✓ valid: 3 agents (1 llm gate, 3 handoffs)');
  });

  it('an invalid pipeline: exit 2 (as `run`), every error as file:line:col with a hint', async () => {
    const result = await validate(fixture('invalid.yaml'));
    expect(result.code).toBe(2);
    expect(
      (await troupe(repoRoot, ['run', '--no-interactive', '-f', fixture('invalid.yaml'), 'x'])).code,
    ).toBe(2);
    const file = fixture('invalid.yaml');
    expect(result.stdout).toBe(
      [
        `${file}:4:5: error: unknown field \`sytem_prompt\` in \`agents[0]\``,
        '  hint: did you mean `system_prompt`?',
        `${file}:5:22: error: handoff target \`reviewr\` does not exist`,
        '  hint: did you mean `reviewer`?',
        `${file}:10:37: error: \`on_reject\` never fires: \`reviewer\` has no gate`,
        '  hint: add a `gate:` to `reviewer`, or use `always`',
        `${file}:12:9: error: duplicate agent id \`developer\``,
        '  hint: first defined at invalid.yaml:2:9',
        '✗ 4 errors, 0 warnings',
      ].join('\n'),
    );
  });

  it('a YAML syntax error: exit 2 at its position', async () => {
    // written here, not as a fixture: the linter parses the YAML files of the repository
    const dir = project({ 'broken.yaml': 'agents:\n  - id: developer\n    runtime: [scripted\n' });
    const result = await troupe(dir, ['validate', 'broken.yaml']);
    expect(result.code).toBe(2);
    expect(result.stdout).toMatch(/^broken\.yaml:4:1: error: YAML syntax error: /);
  });

  it('a param in a gate command: a warning at the placeholder, with the variable to write', async () => {
    const dir = project({
      'p.yaml': `params:
  branch: main
agents:
  - id: a
    runtime: command
    command: [node, -e, "0"]
    gate: {type: command, command: "git diff --quiet \${{ params.branch }}"}
`,
    });
    const result = await troupe(dir, ['validate', 'p.yaml']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      [
        'p.yaml:7:54: warning: param `branch` in a shell command: the gate reads it from the environment variable TROUPE_PARAM_BRANCH, never as shell text',
        '  hint: write "$TROUPE_PARAM_BRANCH" where the value belongs',
      ].join('\n'),
    );
  });

  it('warnings: exit 0, or 2 with --strict', async () => {
    const relaxed = await validate(fixture('warnings.yaml'));
    expect(relaxed.code).toBe(0);
    expect(relaxed.stdout).toContain(
      `${fixture('warnings.yaml')}:4:20: warning: \`inptu\` is not a variable of the system_prompt of \`developer\``,
    );
    expect(relaxed.stdout).toContain(
      `${fixture('warnings.yaml')}:6:5: warning: agent \`forgotten\` is unreachable`,
    );
    expect(relaxed.stdout).toMatch(/✓ valid: 2 agents, 2 warnings$/);

    const strict = await validate(fixture('warnings.yaml'), '--strict');
    expect(strict.code).toBe(2);
    expect(strict.stdout).toMatch(/✗ 0 errors, 2 warnings \(--strict\)$/);
  });

  it("`chunks:` on an agent is not called ignored: it turns the task's chunks on (aqm warns)", async () => {
    const dir = project({
      'p.yaml': `agents:
  - id: planner
    runtime: scripted
    system_prompt: "Plan: {{ input }} {{ chunks }}"
    chunks: { initial: [schema, api] }
`,
    });
    for (const strict of [[], ['--strict']]) {
      const result = await troupe(dir, ['validate', 'p.yaml', ...strict]);
      expect([result.code, result.stdout]).toEqual([0, '✓ valid: 1 agent']);
    }
  });

  it('--json', async () => {
    const result = await validate(fixture('invalid.yaml'), '--json');
    expect(result.code).toBe(2);
    const json = JSON.parse(result.stdout);
    expect(json).toMatchObject({
      valid: false,
      file: join(repoRoot, fixture('invalid.yaml')),
      warnings: [],
      // every agent written, the broken ones and the duplicate too
      summary: { agent_count: 3 },
    });
    expect(json.errors[0]).toEqual({
      file: join(repoRoot, fixture('invalid.yaml')),
      line: 4,
      col: 5,
      message: 'unknown field `sytem_prompt` in `agents[0]`',
      hint: 'did you mean `system_prompt`?',
    });
    const valid = JSON.parse((await validate(fixture('valid.yaml'), '--json')).stdout);
    expect(valid).toMatchObject({ valid: true, errors: [], summary: { agent_count: 3 } });
  });

  it('a PATH that does not exist exits 3 (not found), as `run --file` does', async () => {
    const missing = await validate('nope.yaml');
    expect(missing.code).toBe(3);
    expect(missing.stderr).toBe('troupe: no such file or directory: nope.yaml');
    expect((await validate('--file', 'nope.yaml')).code).toBe(3);
    expect((await troupe(repoRoot, ['run', '--no-interactive', '-f', 'nope.yaml', 'x'])).code).toBe(3);
  });

  it('usage errors exit 2: an unknown flag, a bad --param', async () => {
    expect((await validate('--bogus')).code).toBe(2);
    expect((await validate(fixture('valid.yaml'), '--param', 'novalue')).code).toBe(2);
  });

  it('without PATH, finds the pipeline as every command does', async () => {
    const dir = project({
      '.troupe/config.yaml': 'default_pipeline: dev\n',
      '.troupe/pipelines/dev.yaml': 'agents:\n  - id: a\n    runtime: scripted\n    foo: 1\n',
      '.troupe/pipelines/ok.yaml': PIPE,
    });
    const found = await troupe(join(dir, '.troupe'), ['validate']);
    expect(found.code).toBe(2);
    expect(found.stdout).toContain('pipelines/dev.yaml:4:5: error: unknown field `foo`');
    expect((await troupe(dir, ['validate', '--pipeline', 'ok'])).code).toBe(0);
    expect((await troupe(dir, ['validate', '--file', '.troupe/pipelines/ok.yaml'])).code).toBe(0);
    expect((await troupe(repoRoot, ['validate', dir, '--pipeline', 'ok'])).code).toBe(0);

    const unknown = await troupe(dir, ['validate', '--pipeline', 'prod']);
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toContain('troupe: no pipeline named "prod"');
    expect(unknown.stderr).toContain('available: dev, ok');
  });

  it('validates with param values', async () => {
    const dir = project({
      'p.yaml': 'params:\n  n: { type: number }\nagents:\n  - id: a\n    runtime: scripted\n',
    });
    expect((await troupe(dir, ['validate', 'p.yaml', '--param', 'n=3'])).code).toBe(0);
    const bad = await troupe(dir, ['validate', 'p.yaml', '-p', 'n=three']);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toContain('p.yaml:2:3: error: param `n`: expected a number, not "three"');
  });
});

describe('troupe schema', () => {
  it('prints the committed JSON Schema', async () => {
    const result = await troupe(repoRoot, ['schema']);
    expect(result.code).toBe(0);
    // execa drops the final newline; the unit drift test checks the exact bytes
    expect(result.stdout).toBe(
      readFileSync(join(repoRoot, 'schema', 'pipeline.schema.json'), 'utf8').trimEnd(),
    );
  });
});

describe('validate --strict runs the doctor checks', () => {
  it('an openai agent without its key is a warning, and with --strict an exit 2', async () => {
    const dir = project({
      'p.yaml':
        'agents:\n  - id: a\n    runtime: openai\n    model: gpt-4o\n    openai: {api_key_env: TROUPE_TEST_NO_SUCH_KEY}\n',
    });
    const file = join(dir, 'p.yaml');
    const lax = await validate(file);
    expect(lax.code).toBe(0);
    const strict = await validate(file, '--strict');
    expect(strict.code).toBe(2);
    expect(strict.stdout).toMatch(
      /p\.yaml:2:5: warning: `a` needs TROUPE_TEST_NO_SUCH_KEY in the environment/,
    );
  });
});

describe('YAML that would exhaust the parser', () => {
  const laughs = [
    'a: &a [x, x, x, x, x, x, x, x, x]',
    ...'bcde'.split('').map((n, i) => `${n}: &${n} [${Array(9).fill(`*${'abcd'[i]}`).join(', ')}]`),
    PIPE,
  ].join('\n');
  const cases = {
    'laughs.yaml': [laughs, 'laughs.yaml:2:8', 'YAML aliases expand to too many nodes'],
    'deep.yaml': [
      `${PIPE}x: ${'['.repeat(10_000)}${']'.repeat(10_000)}\n`,
      'deep.yaml:4:',
      'YAML nested more than 100 levels deep',
    ],
  } as const;

  it('one line at file:line:col, exit 2, no stack and no library warning, for validate and run', async () => {
    const dir = project(Object.fromEntries(Object.entries(cases).map(([name, [text]]) => [name, text])));
    for (const [name, [, where, message]] of Object.entries(cases)) {
      const validated = await troupe(dir, ['validate', name]);
      expect(validated.code).toBe(2);
      expect(validated.stderr).toBe('');
      expect(validated.stdout.split('\n')[0]).toMatch(new RegExp(`^${where}\\d*:? error: ${message}`));
      const run = await troupe(dir, ['run', '--no-interactive', '-f', name, 'x']);
      expect(run.code).toBe(2);
      const [line, hint, ...rest] = run.stderr.split('\n');
      expect(line).toMatch(new RegExp(`^troupe: ${where}\\d*:? ${message}`));
      expect(hint).toMatch(/^ {2}hint: /);
      expect(rest).toEqual([]);
    }
  });
});
