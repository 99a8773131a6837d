import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventLog, example, project, troupe, troupeJson } from './support/troupe.js';

describe('troupe run (the real binary)', () => {
  it('runs aqm’s dev team offline: the gate rejects once, the developer fixes it, the deployer ships', async () => {
    const dir = project();
    const { code, json } = await troupeJson(dir, [
      'run',
      'Add a /health endpoint',
      '--file',
      example('dev-team'),
      '--script',
      example('dev-team', 'script.yaml'),
    ]);
    expect(code).toBe(0);
    expect(json.status).toBe('completed');
    expect(json.stages.map((s) => s.agent)).toEqual([
      'developer',
      'reviewer',
      'developer',
      'reviewer',
      'deployer',
    ]);
    expect(json.stages.map((s) => s.gate?.decision ?? null)).toEqual([
      null,
      'rejected',
      null,
      'approved',
      null,
    ]);
    expect(json.stages[1]!.gate!.reason).toBe('no test covers a missing BUILD_VERSION');
    // the rejection reaches the developer through the on_reject payload ({{ output }} of the reviewer)
    expect(json.stages[2]!.output).toContain('unit test');
    expect(json.usage.input_tokens).toBeGreaterThanOrEqual(1200 + 1900);
    const context = readFileSync(join(dir, '.troupe', 'tasks', json.id, 'context.md'), 'utf8');
    expect(context.match(/^## \[stage \d+\]/gm)).toHaveLength(5);
    expect(context).toContain('**reject_reason**: no test covers a missing BUILD_VERSION');
    expect(existsSync(join(dir, '.troupe', 'tasks', json.id, 'agent_developer.md'))).toBe(true);
  });

  it('status --json and list --json read the same task back from any process', async () => {
    const dir = project();
    const run = await troupeJson(dir, [
      'run',
      'x',
      '--file',
      example('dev-team'),
      '--script',
      example('dev-team', 'script.yaml'),
    ]);
    const status = await troupeJson(dir, ['status', run.json.id]);
    expect(status.json).toEqual(run.json);
    const list = await troupeJson<Array<Record<string, string | null>>>(dir, ['list']);
    expect(list.json).toEqual([
      {
        id: run.json.id,
        status: 'completed',
        pipeline: 'dev-team',
        input: 'x',
        created: expect.any(String),
        issue: null,
      },
    ]);
  });

  it('a pipeline error is one line with file:line:col and exit 2, and no task is created', async () => {
    const dir = project({ 'bad.yaml': 'agents:\n  - id: a\n    runtime: claude\n    sytem_prompt: hi\n' });
    const result = await troupe(dir, ['run', 'x', '--file', 'bad.yaml']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/bad\.yaml:4:5/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect((await troupeJson<unknown[]>(dir, ['list'])).json).toEqual([]);
  });

  it('TROUPE_DEBUG=1 shows the stack', async () => {
    const dir = project();
    const result = await troupe(dir, ['status', 'T-NOPE00'], { TROUPE_DEBUG: '1' });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/\n\s+at /);
  });

  it('an unknown task is exit 3, a bad flag exit 2', async () => {
    const dir = project();
    expect((await troupe(dir, ['status', 'T-NOPE00'])).code).toBe(3);
    expect((await troupe(dir, ['run'])).code).toBe(2);
    expect((await troupe(dir, ['list', '--bogus'])).code).toBe(2);
  });

  it('list --status takes every task status and refuses the others, naming them', async () => {
    const dir = project();
    expect((await troupeJson<unknown[]>(dir, ['list', '--status', 'waiting,running'])).json).toEqual([]);
    const bad = await troupe(dir, ['list', '--status', 'waiting,bogus']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('unknown status bogus; one of pending, running, waiting,');
  });

  it('routes on a field of the output and runs a fan-out’s branches at the same time, then joins them', async () => {
    const dir = project({
      'p.yaml': `agents:
  - id: triage
    runtime: claude
    system_prompt: "Triage: {{ input }}"
    handoffs:
      - { to: "sec, perf", condition: "severity == critical" }
      - { to: backlog, condition: "severity != critical" }
  - id: sec
    runtime: claude
    handoffs: [{ to: summary }]
  - id: perf
    runtime: claude
    handoffs: [{ to: summary }]
  - id: summary
    runtime: claude
    system_prompt: "{% for b in branches %}[{{ b.agent }}] {{ b.output }};{% endfor %}"
  - id: backlog
    runtime: claude
`,
      's.yaml': `agents:
  triage: ['{"severity": "critical", "note": "not a drill"}']
  sec: [{reply: "no injection", delay_ms: 400}]
  perf: [{reply: "N+1 query", delay_ms: 400}]
  summary:
    - when: '^\\[sec\\] no injection;\\[perf\\] N\\+1 query;$'
      reply: "both seen"
  backlog: ["parked"]
`,
    });
    const { code, json } = await troupeJson(dir, [
      'run',
      'incident',
      '--file',
      'p.yaml',
      '--script',
      's.yaml',
    ]);
    expect(json.error).toBeNull();
    expect(code).toBe(0);
    expect(json.stages.map((s) => s.agent)).toEqual(['triage', 'sec', 'perf', 'summary']);
    expect(json.stages[3]!.output).toBe('both seen');
    const types = eventLog(dir, json.id).map((e) => `${e.type}:${(e.data.agent as string) ?? ''}`);
    const firstDone = types.findIndex(
      (t) => t.startsWith('stage_completed:sec') || t.startsWith('stage_completed:perf'),
    );
    expect(types.indexOf('stage_started:perf')).toBeLessThan(firstDone);
    expect(types.indexOf('stage_started:sec')).toBeLessThan(firstDone);
  });

  it('runs a fan-out’s branches at the same time when the join can send the work back to the agent that fanned out', async () => {
    // each branch marks that it started, then waits (up to 10 s) for the other's mark and takes it
    // away: a branch can only finish while the other one runs
    const rendezvous = (me: string, other: string) =>
      JSON.stringify([
        'node',
        '-e',
        `const fs = require('fs'); const end = Date.now() + 10000; const t = setInterval(() => { if (fs.existsSync('${other}.started')) { clearInterval(t); fs.rmSync('${other}.started'); } else if (Date.now() > end) { console.error('${other} did not run while ${me} ran'); process.exit(1); } }, 20);`,
      ]);
    const branch = (me: string, other: string) =>
      `  ${me}:\n    - reply: "${me} done"\n      write: {${me}.started: ""}\n      run: ${rendezvous(me, other)}\n`;
    const dir = project({
      'p.yaml': `agents:
  - id: architect
    runtime: claude
    handoffs: [{ to: "frontend, backend" }]
  - id: frontend
    runtime: claude
    handoffs: [{ to: reviewer }]
  - id: backend
    runtime: claude
    handoffs: [{ to: reviewer }]
  - id: reviewer
    runtime: claude
    gate: { type: llm }
    handoffs: [{ to: architect, condition: on_reject }]
`,
      's.yaml': `agents:\n  architect: ["split it"]\n${branch('frontend', 'backend')}${branch('backend', 'frontend')}  reviewer: ["reviewed"]\ngates:\n  reviewer: [{decision: rejected, reason: "again"}, approved]\n`,
    });
    const { code, json } = await troupeJson(dir, ['run', 'x', '--file', 'p.yaml', '--script', 's.yaml']);
    expect([code, json.error]).toEqual([0, null]);
    const agents = ['architect', 'frontend', 'backend', 'reviewer'];
    expect(json.stages.map((s) => s.agent).sort()).toEqual([...agents, ...agents].sort());
    // in each round, both branches start before either completes
    const log = eventLog(dir, json.id).filter(
      (e) => e.data.agent === 'frontend' || e.data.agent === 'backend',
    );
    const rounds = log
      .filter((e) => e.type === 'stage_started' || e.type === 'stage_completed')
      .map((e) => e.type);
    expect(rounds).toEqual([
      ...['stage_started', 'stage_started', 'stage_completed', 'stage_completed'],
      ...['stage_started', 'stage_started', 'stage_completed', 'stage_completed'],
    ]);
  });

  it('{{ branches }} on its own prints each branch as text; a handoff payload reads it too', async () => {
    const dir = project({
      'p.yaml': `agents:
  - id: split
    runtime: claude
    handoffs: [{ to: "left, right" }]
  - id: left
    runtime: claude
    handoffs: [{ to: merge }]
  - id: right
    runtime: claude
    handoffs: [{ to: merge }]
  - id: merge
    runtime: claude
    system_prompt: |-
      Merge these:
      {{ branches }}
      ({{ branches | length }} branches)
    handoffs: [{ to: report, payload: "{{ branches }}" }]
  - id: report
    runtime: claude
    system_prompt: "Report on: {{ input }}"
`,
      's.yaml': `agents:
  split: ["go"]
  left: ["west side"]
  right: ["east side"]
  merge:
    - when: '^Merge these:\\n## from left \\(stage \\d\\)\\n\\nwest side\\n\\n## from right \\(stage \\d\\)\\n\\neast side\\n\\(2 branches\\)$'
      reply: "merged"
  report:
    - when: '^Report on: ## from left \\(stage \\d\\)\\n\\nwest side\\n\\n## from right \\(stage \\d\\)\\n\\neast side$'
      reply: "readable"
`,
    });
    const { code, json } = await troupeJson(dir, ['run', 'x', '--file', 'p.yaml', '--script', 's.yaml']);
    expect(json.error).toBeNull();
    expect(code).toBe(0);
    expect(json.stages.map((s) => s.agent)).toEqual(['split', 'left', 'right', 'merge', 'report']);
    expect(json.stages.slice(3).map((s) => s.output)).toEqual(['merged', 'readable']);
  });

  it('a command gate rejects with the tail of its output, and the agent tries again', async () => {
    const dir = project({
      'p.yaml': `agents:
  - id: tester
    runtime: claude
    gate:
      type: command
      command: 'printf "%s\\n" "$TROUPE_OUTPUT" | grep -q "^PASS"'
      max_retries: 2
`,
      's.yaml': `agents:
  tester: ["FAIL: 2 tests", "PASS: 14 tests"]
`,
    });
    const { code, json } = await troupeJson(dir, [
      'run',
      'test it',
      '--file',
      'p.yaml',
      '--script',
      's.yaml',
    ]);
    expect(code).toBe(0);
    expect(json.stages.map((s) => [s.output, s.gate?.decision])).toEqual([
      ['FAIL: 2 tests', 'rejected'],
      ['PASS: 14 tests', 'approved'],
    ]);
    expect(json.stages[0]!.gate!.reason).toMatch(/^command exited with 1/);
  });

  it('a stage that runs past its timeout fails the task with exit 4', async () => {
    const dir = project({
      'p.yaml': 'agents:\n  - id: slow\n    runtime: claude\n    timeout: 1\n    retry: {max_retries: 0}\n',
      's.yaml': 'agents:\n  slow: [{reply: "late", delay_ms: 5000}]\n',
    });
    const { code, json } = await troupeJson(dir, ['run', 'x', '--file', 'p.yaml', '--script', 's.yaml']);
    expect(json.status).toBe('failed');
    expect(json.error).toMatch(/timed out after 1s/);
    expect(code).toBe(4);
  });

  it('an agent with no scripted reply fails the stage naming the missing entry', async () => {
    const dir = project({
      'p.yaml': 'agents:\n  - id: lonely\n    runtime: claude\n',
      's.yaml': 'agents: {}\n',
    });
    const { code, json, stderr } = await troupeJson(dir, [
      'run',
      'x',
      '--file',
      'p.yaml',
      '--script',
      's.yaml',
    ]);
    expect(code).toBe(1);
    expect(json.error).toContain('agents.lonely');
    // said before the run too, as a warning: conditions may keep a run away from an agent
    expect(stderr).toMatch(/^s\.yaml:1:1: warning: no reply for `lonely`/);
  });

  it('a script key naming no agent stops run and test before any stage, at the key (exit 2)', async () => {
    const dir = project({
      'p.yaml':
        'agents:\n  - id: frontend\n    runtime: claude\n    handoffs: [{ to: backend }]\n  - id: backend\n    runtime: claude\n',
      's.yaml': 'agents:\n  frontend: [done]\n  backnd: [done]\n',
    });
    for (const args of [
      ['run', 'x', '--file', 'p.yaml'],
      ['test', '--file', 'p.yaml'],
    ]) {
      const result = await troupe(dir, [...args, '--script', 's.yaml']);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(
        'troupe: s.yaml:3:3: agents.backnd: pipeline `p` has no agent `backnd`\n  hint: did you mean `backend`?',
      );
    }
    expect(existsSync(join(dir, '.troupe', 'tasks'))).toBe(false);
  });

  it('params reach prompts through the params substitution and --param', async () => {
    const dir = project({
      'p.yaml': `params:
  lang: {type: string, default: go}
agents:
  - id: dev
    runtime: claude
    system_prompt: "Write \${{ params.lang }}: {{ input }}"
`,
      's.yaml': `agents:
  dev:
    - {when: "^Write rust: hello$", reply: "rust it is"}
    - "wrong language"
`,
    });
    const { json } = await troupeJson(dir, [
      'run',
      'hello',
      '--file',
      'p.yaml',
      '--script',
      's.yaml',
      '--param',
      'lang=rust',
    ]);
    expect(json.stages[0]!.output).toBe('rust it is');
  });

  it('a param is data: one argv element, never shell text in a command gate, never template code in a prompt', async () => {
    // the red team's pipeline (M4): the param in a prompt, an argv element and a gate's shell string
    const dir = project({
      'p.yaml': `params:
  branch: {type: string, default: main}
agents:
  - id: a
    runtime: command
    command: [node, -e, "process.stdout.write(JSON.stringify({argv: process.argv.slice(1), prompt: process.env.TROUPE_PROMPT}))", "\${{ params.branch }}"]
    system_prompt: "Input: {{ input }} / branch: \${{ params.branch }}"
    gate:
      type: command
      command: 'echo checking \${{ params.branch }} > gate.txt && test \${{ params.branch }} = main && test "$TROUPE_PARAM_BRANCH" = main'
      max_retries: 1
`,
    });
    const run = async (branch: string) => {
      const { json } = await troupeJson(dir, ['run', 'x', '--file', 'p.yaml', '--param', `branch=${branch}`]);
      const stage = json.stages[0]!;
      return { json, stage, seen: JSON.parse(stage.output) as { argv: string[]; prompt: string } };
    };

    const pwned = join(dir, 'pwn_param_gate');
    const injection = await run(`main; touch ${pwned} #`);
    expect(existsSync(pwned)).toBe(false);
    expect(readFileSync(join(dir, 'gate.txt'), 'utf8')).toBe(`checking main; touch ${pwned} #\n`);
    expect(injection.stage.gate?.decision).toBe('rejected');
    expect(injection.seen.argv).toEqual([`main; touch ${pwned} #`]);

    const template = '{{ 7*7 }}{% for i in range(3) %}L{% endfor %}';
    const templated = await run(template);
    expect(templated.seen.prompt).toContain(`Input: x / branch: ${template}`);
    expect(templated.seen.argv).toEqual([template]);

    const legitimate = await run('main');
    expect(legitimate.stage.gate?.decision).toBe('approved');
    expect(legitimate.json.status).toBe('completed');
    expect(legitimate.seen.prompt).toContain('Input: x / branch: main');
    expect(readFileSync(join(dir, 'gate.txt'), 'utf8')).toBe('checking main\n');
  });
});

describe('troupe usage', () => {
  it('totals tokens by agent and by task, from what the stages recorded', async () => {
    const dir = project();
    const run = await troupeJson(dir, [
      'run',
      'x',
      '--file',
      example('dev-team'),
      '--script',
      example('dev-team', 'script.yaml'),
    ]);
    const byAgent = await troupeJson<{
      total: { input_tokens: number; stages: number };
      rows: Array<{ key: string; stages: number; input_tokens: number }>;
    }>(dir, ['usage']);
    expect(byAgent.json.total.stages).toBe(5);
    expect(byAgent.json.total.input_tokens).toBe(run.json.usage.input_tokens);
    const developer = byAgent.json.rows.find((r) => r.key === 'developer')!;
    expect(developer).toMatchObject({ stages: 2, input_tokens: 1200 + 1900 });
    const byTask = await troupeJson<{ rows: Array<{ key: string }> }>(dir, ['usage', '--by', 'task']);
    expect(byTask.json.rows.map((r) => r.key)).toEqual([run.json.id]);
    expect((await troupe(dir, ['usage', '--by', 'colour'])).code).toBe(2);
  });

  it('labels a run with --script scripted, not the runtimes and models it never called', async () => {
    const dir = project();
    const args = ['--file', example('dev-team'), '--script', example('dev-team', 'script.yaml')];
    await troupeJson(dir, ['run', 'x', ...args]);
    const keys = async (by: string) =>
      (await troupeJson<{ rows: Array<{ key: string }> }>(dir, ['usage', '--by', by])).json.rows.map(
        (r) => r.key,
      );
    expect(await keys('model')).toEqual(['scripted']);
    expect(await keys('runtime')).toEqual(['scripted']);
    expect((await troupe(dir, ['usage', '--by', 'model'])).stdout).not.toContain('claude default');
  });
});

describe('troupe run --from tasks.json', () => {
  it('runs independent tasks at the same time and a dependent one after them', async () => {
    const dir = project({
      'p.yaml': 'agents:\n  - id: a\n    runtime: claude\n',
      's.yaml': 'agents:\n  a: [{reply: "done", delay_ms: 300}]\n',
      'tasks.json': JSON.stringify([
        { id: 'db', input: 'schema' },
        { id: 'api', input: 'endpoints' },
        { id: 'ui', input: 'pages', depends_on: ['db', 'api'] },
      ]),
    });
    const run = await troupe(dir, [
      'run',
      '--from',
      'tasks.json',
      '--concurrency',
      '2',
      '--file',
      'p.yaml',
      '--script',
      's.yaml',
      '--json',
    ]);
    expect(run.code).toBe(0);
    const results = JSON.parse(run.stdout) as Array<{ id: string; task: string; status: string }>;
    expect(results.map((r) => [r.id, r.status])).toEqual([
      ['db', 'completed'],
      ['api', 'completed'],
      ['ui', 'completed'],
    ]);
    const starts = Object.fromEntries(
      results.map((r) => [r.id, eventLog(dir, r.task).find((e) => e.type === 'stage_started')!.seq]),
    );
    const ends = Object.fromEntries(
      results.map((r) => [r.id, eventLog(dir, r.task).find((e) => e.type === 'stage_completed')!.seq]),
    );
    // db and api overlapped; ui started after both had finished
    expect(starts.api!).toBeLessThan(ends.db!);
    expect(starts.ui!).toBeGreaterThan(Math.max(ends.db!, ends.api!));
  });

  it('a dependency cycle is one clear line and exit 2', async () => {
    const dir = project({
      'p.yaml': 'agents:\n  - id: a\n    runtime: claude\n',
      'tasks.json': JSON.stringify([
        { id: 'x', input: '1', depends_on: ['y'] },
        { id: 'y', input: '2', depends_on: ['x'] },
      ]),
    });
    const run = await troupe(dir, ['run', '--from', 'tasks.json', '--file', 'p.yaml']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('the dependencies go round: x → y → x');
  });
});

describe('cost', () => {
  it('a runtime that reports no cost gets an estimate from the price table, marked as one', async () => {
    const dir = project({
      'p.yaml': 'agents:\n  - id: a\n    runtime: claude\n    model: claude-sonnet-4-6\n',
      's.yaml': 'agents:\n  a: [{reply: "ok", usage: {input_tokens: 1000000, output_tokens: 100000}}]\n',
      '.troupe/config.yaml': 'prices:\n  sonnet: {input: 2, output: 10}\n',
    });
    const { json } = await troupeJson(dir, ['run', 'x', '--file', 'p.yaml', '--script', 's.yaml']);
    expect(json.stages[0]!.usage).toMatchObject({ cost_usd: 3, cost_estimated: true });
  });
});
