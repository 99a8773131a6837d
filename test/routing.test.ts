import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventLog, project, troupe, troupeJson } from './support/troupe.js';

const config = [
  'routing:',
  '  tiers:',
  '    fast: {runtime: gemini, model: gemini-2.5-flash, effort: low}',
  '    deep: {runtime: claude, model: opus, effort: high}',
  '  learn: {min_samples: 2}',
  '',
].join('\n');

const pipeline = [
  'agents:',
  '  - id: coder',
  '    runtime: claude',
  '    model: auto',
  '    gate: {type: llm, prompt: "complete?", max_retries: 3}',
  '',
].join('\n');

// the cheap tier does small work well and big work badly; the gate says so
const script = [
  'agents:',
  '  coder:',
  '    - {model: flash, when: big, reply: "quick fix (incomplete)"}',
  '    - {model: flash, reply: "quick fix"}',
  '    - {model: opus, reply: "careful fix"}',
  'gates:',
  '  coder:',
  '    - {when: incomplete, decision: rejected, reason: "half done"}',
  '    - approved',
  '',
].join('\n');

type Route = {
  tier: string;
  runtime: string;
  model: string;
  effort: string;
  reason: string;
  overrides: string[];
};

const routes = (dir: string, id: string) =>
  eventLog(dir, id)
    .filter((e) => e.type === 'decision' && e.data.kind === 'route')
    .map((e) => e.data as unknown as Route);

const run = (dir: string, input: string, ...flags: string[]) =>
  troupeJson(dir, ['run', input, '--file', 'p.yaml', '--script', 's.yaml', ...flags]);

describe('model and effort routing', () => {
  it('explores the cheap tier, learns from the gate, escalates a rejection, and logs every decision', async () => {
    const dir = project({ '.troupe/config.yaml': config, 'p.yaml': pipeline, 's.yaml': script });

    const first = await run(dir, 'small fix');
    expect(first.json.status).toBe('completed');
    expect(routes(dir, first.json.id)).toEqual([
      expect.objectContaining({
        tier: 'fast',
        runtime: 'gemini',
        model: 'gemini-2.5-flash',
        effort: 'low',
        reason: 'exploring: fast has 0 of 2 outcomes for p/coder@-',
      }),
    ]);

    // rejected on the cheap tier: the retry escalates, and the task still ends approved
    const big = await run(dir, 'big refactor');
    expect(big.json.status).toBe('completed');
    expect(routes(dir, big.json.id).map((r) => [r.tier, r.reason])).toEqual([
      ['fast', 'exploring: fast has 1 of 2 outcomes for p/coder@-'],
      ['deep', 'default tier'],
    ]);
    expect(big.json.stages.map((s: { output: string }) => s.output)).toEqual([
      'quick fix (incomplete)',
      'careful fix',
    ]);

    // fast has 1 approval in 2 (50 %): known, so no longer explored, and not good enough to prefer
    const third = await run(dir, 'small fix again');
    expect(routes(dir, third.json.id)[0]).toMatchObject({
      tier: 'deep',
      reason: 'default tier',
      overrides: [],
    });

    const status = await troupe(dir, ['status', big.json.id]);
    expect(status.stdout).toMatch(/\[1\] coder .* tier: fast \(gemini-2\.5-flash\) {2}gate: rejected/);
    expect(status.stdout).toMatch(/\[2\] coder .* tier: deep \(opus\) {2}gate: approved/);

    const forced = await run(dir, 'small', '--tier', 'fast');
    expect(routes(dir, forced.json.id)[0]).toMatchObject({ tier: 'fast', reason: '--tier fast' });

    const summary = await troupeJson<{
      summary: Array<{ tier: string; stages: number; approved: number; rejected: number }>;
      decisions: Array<{ taskId: string; verdict: string | null }>;
    }>(dir, ['decisions', '--json']);
    expect(summary.json.summary.map((r) => [r.tier, r.stages, r.approved, r.rejected])).toEqual([
      ['deep', 2, 2, 0],
      ['fast', 3, 2, 1],
    ]);
    const text = await troupe(dir, ['decisions']);
    expect(text.stdout).toMatch(/fast\s+p\/coder@-\s+3\s+2 \(67%\)\s+1/);

    // the people's log: each decision when made, each outcome when its task ended
    const lines = readFileSync(join(dir, '.troupe', 'decisions.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.filter((l) => l.type === 'decision')).toHaveLength(5);
    expect(lines.filter((l) => l.type === 'outcome').map((l) => [l.task, l.tier, l.verdict])).toEqual([
      [first.json.id, 'fast', 'approved'],
      [big.json.id, 'fast', 'rejected'],
      [big.json.id, 'deep', 'approved'],
      [third.json.id, 'deep', 'approved'],
      [forced.json.id, 'fast', 'approved'],
    ]);

    // usage counts the model each stage ran on, not `auto` (here the script stood in for it)
    const usage = await troupeJson<{ rows: Array<{ key: string; stages: number }> }>(dir, [
      'usage',
      '--by',
      'model',
      '--json',
    ]);
    expect(Object.fromEntries(usage.json.rows.map((r) => [r.key, r.stages]))).toEqual({
      'gemini-2.5-flash (scripted)': 3,
      'opus (scripted)': 2,
    });
  });

  it('rules recommend by label and keyword; effort: auto keeps the agent runtime and model', async () => {
    const dir = project({
      '.troupe/config.yaml': `${config.replace('  learn: {min_samples: 2}\n', '  learn: false\n')}  rules:\n    - {tier: fast, labels: docs}\n    - {tier: deep, keywords: [security]}\n  default: fast\n`,
      'p.yaml': 'agents:\n  - id: coder\n    runtime: codex\n    model: gpt-5\n    effort: auto\n',
      's.yaml': 'agents:\n  coder: ["done"]\n',
    });
    const docs = await run(dir, 'fix the security note', '--label', 'docs');
    expect(routes(dir, docs.json.id)[0]).toMatchObject({
      tier: 'fast',
      runtime: 'codex',
      model: 'gpt-5',
      effort: 'low',
      reason: 'rule 1 (label docs)',
    });
    const security = await run(dir, 'close the security hole');
    expect(routes(dir, security.json.id)[0]).toMatchObject({
      tier: 'deep',
      effort: 'high',
      reason: 'rule 2 (keyword "security")',
    });
  });

  it('a router model recommends the tier; when it names none the rules do, and the decision says so', async () => {
    const withRouter = `${config.replace('  learn: {min_samples: 2}\n', '  learn: false\n')}  router: {runtime: claude, model: haiku}\n`;
    const pipe = 'agents:\n  - id: coder\n    runtime: claude\n    model: auto\n';
    const dir = project({
      '.troupe/config.yaml': withRouter,
      'p.yaml': pipe,
      's.yaml': [
        'agents:',
        '  _tier_router:',
        '    - {when: "Task: typo", reply: "TIER: fast\\nREASON: a one-word change"}',
        '    - "I am not sure"',
        '  coder: ["done"]',
        '',
      ].join('\n'),
    });
    const typo = await run(dir, 'typo in the README');
    expect(routes(dir, typo.json.id)[0]).toMatchObject({ tier: 'fast', reason: 'router: a one-word change' });
    const vague = await run(dir, 'rework the scheduler');
    expect(routes(dir, vague.json.id)[0]).toMatchObject({
      tier: 'deep',
      reason: 'default tier (router: no tier in its answer "I am not sure")',
    });
  });

  it('refuses model: auto without tiers, an unknown --tier, and a rule naming no tier', async () => {
    const dir = project({ 'p.yaml': pipeline, 's.yaml': script });
    const validated = await troupe(dir, ['validate', 'p.yaml']);
    expect(validated.stdout + validated.stderr).toMatch(
      /p\.yaml:4:12: warning: `coder` has model: auto, but \.troupe\/config\.yaml has no routing tiers/,
    );
    const none = await troupe(dir, ['run', 'x', '--file', 'p.yaml', '--script', 's.yaml']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/agent coder has model or effort auto, but there are no routing tiers/);

    const withTiers = project({ '.troupe/config.yaml': config, 'p.yaml': pipeline, 's.yaml': script });
    const unknown = await troupe(withTiers, [
      'run',
      'x',
      '--file',
      'p.yaml',
      '--script',
      's.yaml',
      '--tier',
      'huge',
    ]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no tier 'huge'.*\n.*tiers: fast, deep/);

    const bad = project({
      '.troupe/config.yaml': `${config}  rules:\n    - {tier: medium}\n`,
      'p.yaml': pipeline,
    });
    const broken = await troupe(bad, ['list']);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/config\.yaml:7:14: .*no tier 'medium' \(tiers: fast, deep\)/);
    expect(broken.stderr).not.toMatch(/\n\s+at /);
  });
});
